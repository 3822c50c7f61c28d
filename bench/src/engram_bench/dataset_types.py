"""What a retrieval dataset is, whatever its layout: documents, queries with their qrels, the
groups searched together, and the metrics a layout is scored by. Apart from the loaders
(``engram_bench.datasets``, ``engram_bench.memory_sets``) so that both build the same types
without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

DatasetKind = Literal["beir", "locomo"]
BEIR_METRICS = ("ndcg@10", "recall@100")
# Recall@100 too: hybrid must not lose at depth what a single mode finds (issue 39, point 10).
LOCOMO_METRICS = ("recall@5", "recall@10", "ndcg@10", "recall@100")
# The usual reading of LoCoMo's category numbers (the dataset itself carries only the numbers).
LOCOMO_CATEGORIES = {
    "1": "multi-hop",
    "2": "temporal",
    "3": "open-domain",
    "4": "single-hop",
    "5": "adversarial",
}


@dataclass(frozen=True)
class Doc:
    id: str
    text: str


@dataclass(frozen=True)
class Query:
    id: str
    text: str
    qrels: dict[str, int]
    category: str | None = None


@dataclass(frozen=True)
class Group:
    """Documents indexed together and the queries asked of them."""

    name: str
    docs: list[Doc]
    queries: list[Query]


@dataclass(frozen=True)
class Dataset:
    name: str
    kind: DatasetKind
    path: Path
    groups: list[Group]
    metrics: tuple[str, ...]
    # BEIR's evaluator drops a hit whose id equals the query id (self-retrieval in some sets).
    ignore_identical_ids: bool = False
    category_labels: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    @property
    def doc_count(self) -> int:
        return sum(len(g.docs) for g in self.groups)

    @property
    def query_count(self) -> int:
        return sum(len(g.queries) for g in self.groups)
