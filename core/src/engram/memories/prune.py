"""``engram prune``: remove memories that are old, unused and unimportant, least valuable first.

A memory's age is the days since it was last touched: its newest of ``created_at``,
``updated_at`` and ``last_accessed_at`` (search and recall hits, from the access log).

- ``--max-age D``: a memory goes once its age exceeds ``D * importance`` days, so importance 2
  keeps it twice as long and importance 0 lets it go at once (seed 004: "high importance
  episodes kept longer").
- ``--max-count N``: then, while more than ``N`` memories remain, the least valuable goes:
  history (superseded, archived) before live memories, then lower importance, then older.

Only writable folders are pruned (``--scope project``, ``user`` or ``all``); external folders
never. ``--dry-run`` prints the same list and removes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC

from pydantic import BaseModel, Field

from engram.errors import ConfigError
from engram.filters import parse_iso
from engram.memories.agent import all_memories, forget
from engram.memories.writer import Writer
from engram.models import MemoryInfo

PRUNE_SCOPES = ("project", "user", "all")


class Candidate(BaseModel):
    """A memory ``prune`` looked at, with what it judged it by."""

    info: MemoryInfo
    age_days: float
    access_count: int = 0
    reason: str = ""


class PruneReport(BaseModel):
    dry_run: bool
    examined: int
    removed: list[Candidate] = Field(default_factory=list)


def plan_prune(
    memories: Sequence[MemoryInfo],
    *,
    now: float,
    max_age_days: float | None,
    max_count: int | None,
) -> list[Candidate]:
    """Which memories to remove, in the order they would go."""
    candidates = [_judge(m, now) for m in memories]
    doomed: list[Candidate] = []
    keep: list[Candidate] = []
    for c in candidates:
        limit = None if max_age_days is None else max_age_days * c.info.importance
        if limit is not None and c.age_days > limit:
            c.reason = f"unused for {c.age_days:.0f} days > {limit:g} (max age * importance)"
            doomed.append(c)
        else:
            keep.append(c)
    doomed.sort(key=_least_valuable_first)
    if max_count is not None and len(keep) > max_count:
        keep.sort(key=_least_valuable_first)
        extra = keep[: len(keep) - max_count]
        for c in extra:
            c.reason = f"more than {max_count} memories; {_rank(c)}"
        doomed.extend(extra)
    return doomed


def _judge(info: MemoryInfo, now: float) -> Candidate:
    moments = (info.created_at, info.updated_at, info.last_accessed_at)
    stamps = [parse_iso(s) for s in moments if s]
    touched = max((s.timestamp() for s in stamps if s is not None), default=now)
    return Candidate(
        info=info,
        age_days=max(0.0, (now - touched) / 86_400.0),
        access_count=info.access_count,
    )


def _least_valuable_first(c: Candidate) -> tuple[bool, float, float]:
    return (c.info.live, c.info.importance, -c.age_days)


def _rank(c: Candidate) -> str:
    state = "history" if not c.info.live else "live"
    return f"{state}, importance {c.info.importance:g}, unused for {c.age_days:.0f} days"


def prune(
    writer: Writer,
    *,
    max_age_days: float | None,
    max_count: int | None,
    scope: str = "project",
    dry_run: bool = False,
    now: float | None = None,
) -> PruneReport:
    """Plan and (unless ``dry_run``) remove; files and their chunks go together."""
    if max_age_days is None and max_count is None:
        raise ConfigError("prune needs --max-age DAYS, --max-count N or both; nothing to do")
    if max_age_days is not None and max_age_days < 0:
        raise ConfigError(f"--max-age must be 0 or more days, got {max_age_days:g}")
    if max_count is not None and max_count < 0:
        raise ConfigError(f"--max-count must be 0 or more, got {max_count}")
    if scope not in PRUNE_SCOPES:
        raise ConfigError(
            f"unknown scope {scope!r} for prune; use one of {', '.join(PRUNE_SCOPES)}"
        )
    when = time.time() if now is None else now
    folders = [f for f in writer.folders if f.writable and scope in ("all", f.scope)]
    scopes = {f.scope for f in folders}
    infos = [m for m in all_memories(writer) if m.scope in scopes]
    doomed = plan_prune(infos, now=when, max_age_days=max_age_days, max_count=max_count)
    if not dry_run:
        for c in doomed:
            forget(writer, c.info.path)
    return PruneReport(dry_run=dry_run, examined=len(infos), removed=doomed)


def describe(c: Candidate) -> str:
    when = c.info.touched_at or "?"
    stamp = parse_iso(when)
    day = stamp.astimezone(UTC).date().isoformat() if stamp else when
    return f"{c.info.path} ({c.info.type or 'untyped'}, {day}): {c.reason}"
