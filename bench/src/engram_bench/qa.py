"""Question lists in LoCoMo's shape (``qa``: ``question``, ``evidence``, ``category``) as bench
``Query``s, and the ``max_queries`` budget spent across a set's groups in order: one reading
for LoCoMo, the sets derived from it and REALTALK, which differ only in how an evidence
reference names a document."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engram_bench.dataset_types import Doc, Group, Query


def qa_query(group: str, index: int, qa: Mapping[str, Any], relevant: Mapping[str, int]) -> Query:
    """The ``index``-th question of ``group`` (id ``group/q<index>``), its category as text."""
    category = qa.get("category")
    return Query(
        f"{group}/q{index}",
        str(qa["question"]),
        dict(relevant),
        None if category is None else str(category),
    )


class Budget:
    """What is left of ``max_queries`` (``None``: no limit) while groups are read in order, so
    a quick run takes the first questions of the first groups, as a reader of the set would."""

    def __init__(self, limit: int | None) -> None:
        self.left = limit

    def take(self, queries: list[Query]) -> list[Query]:
        if self.left is None:
            return queries
        taken = queries[: self.left]
        self.left -= len(taken)
        return taken

    @property
    def spent(self) -> bool:
        return self.left == 0

    def add(self, groups: list[Group], name: str, docs: list[Doc], queries: list[Query]) -> bool:
        """Adds the group ``name`` with the questions still allowed (none: not added); whether
        the budget is now spent, so the reader stops."""
        queries = self.take(queries)
        if queries:
            groups.append(Group(name, docs, queries))
        return self.spent
