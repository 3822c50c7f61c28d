"""Aging: which memories stop being live as newer ones arrive, by each type's ``aging`` rule in
``engram.types`` (``never`` for most):

- ``latest-only`` (``progress``): only the newest progress memory of a project stays live
  (``[lifecycle] latest_progress_only``); older ones are superseded by it. ``progress`` is
  project work only: extractors file a personal event ("I finished my book") as a ``fact``,
  which never ages.
- ``condense`` (``session-summary``): the newest ``keep_session_summaries`` (3) of a project
  stay live; older ones are condensed into one ``learned-pattern`` when the extractor can (the
  ``llm`` one asks its model) and superseded by it, or archived when it cannot (the ``rules``
  one).

Both are kept per memory folder and per ``project`` (the frontmatter key every written memory
carries), and run after each write of a type that ages and on ``engram age``. Planning is pure
(this module); applying it writes frontmatter (``engram.memories``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.config import LifecycleConfig
from engram.models import MemoryInfo
from engram.types import types_aging


@dataclass
class AgingPlan:
    """``superseded``: (old progress memory, the newer one that replaces it);
    ``condense``: groups of old session summaries (oldest last) to condense or archive."""

    superseded: list[tuple[MemoryInfo, MemoryInfo]] = field(default_factory=list)
    condense: list[list[MemoryInfo]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not self.superseded and not self.condense


def plan_aging(memories: Sequence[MemoryInfo], rules: LifecycleConfig) -> AgingPlan:
    """What aging does to the live memories of one folder."""
    plan = AgingPlan()
    live = [m for m in memories if m.live and m.id]
    if rules.latest_progress_only:
        for group in _by_project(live, types_aging("latest-only")):
            newest, older = group[0], group[1:]
            plan.superseded.extend((old, newest) for old in older)
    for group in _by_project(live, types_aging("condense")):
        old = group[rules.keep_session_summaries :]
        if old:
            plan.condense.append(old)
    return plan


def _by_project(memories: Sequence[MemoryInfo], types: Sequence[str]) -> list[list[MemoryInfo]]:
    """Memories of ``types`` grouped by type and project, each group newest first (ties by id)."""
    groups: dict[tuple[str, str], list[MemoryInfo]] = {}
    for m in memories:
        if m.type in types:
            groups.setdefault((m.type or "", m.project or ""), []).append(m)
    return [
        sorted(group, key=lambda m: (m.created_at or "", m.id or ""), reverse=True)
        for _, group in sorted(groups.items())
    ]
