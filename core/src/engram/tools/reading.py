"""Reading agent tools beyond search and get: a memory's history, the recall block for a task,
the tags in use, recent activity and API usage (kept apart from ``engram.tools`` so that module
stays small; ``tools.TOOLS`` lists them). None of them writes a memory."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from engram.dashboard import activity
from engram.memories.lifecycle.history import History
from engram.memories.recall import Recall
from engram.memory import Memory
from engram.stores.origins import refuse_foreign
from engram.usage import GROUPS, GroupBy, UsageLedger, UsageRow, ledger_path

DAY = 86_400.0
_BY_DAY: list[GroupBy] = ["day"]


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- history


class MemoryHistoryInput(_Input):
    """A memory's history: the memories it replaced or was replaced by, those it may
    contradict, and every earlier wording (numbered for memory_restore)."""

    id: str = Field(min_length=1, max_length=1000, description="The memory's id (or its path).")


def history(memory: Memory, args: MemoryHistoryInput) -> History:
    refuse_foreign(memory.store, args.id)
    return memory.history(args.id)


def render_history(out: History) -> str:
    lines = [f"History of {out.memory.id} ({out.memory.path}), oldest first:"]
    for entry in out.entries:
        if entry.kind == "revision":
            head = f"- revision {entry.revision} of {entry.memory_id} ({entry.why or 'merged'})"
        else:
            head = f"- {entry.memory_id} [{entry.status}] {entry.path}"
        lines.append(f"{head}, {entry.when or '?'}: {entry.wording}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- recall


class MemoryRecallInput(_Input):
    """The few memories most relevant to a task, packed into a small block to read before
    starting it (what a session starts with)."""

    task: str = Field(min_length=1, max_length=2000, description="The task or question, in words.")
    budget: int | None = Field(
        default=None, ge=50, le=20_000, description="Most tokens the block may take."
    )
    source: Literal["memory", "vault", "sessions"] | None = Field(
        default=None, description="Limit to one source (default: memories and notes)."
    )


def recall(memory: Memory, args: MemoryRecallInput) -> Recall:
    return memory.recall(args.task, budget=args.budget, source=args.source)


def render_recall(out: Recall) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    return (out.text or "Nothing relevant is remembered for this task.") + notes


# --------------------------------------------------------------------------- tags


class MemoryTagsInput(_Input):
    """The tags stored memories use, most used first: pick one for memory_search or memory_list
    (tag filter), or reuse one when storing."""

    include_superseded: bool = Field(default=False, description="Count history too.")


class TagCount(BaseModel):
    tag: str
    count: int


class TagsOutput(BaseModel):
    tags: list[TagCount]


def tags(memory: Memory, args: MemoryTagsInput) -> TagsOutput:
    counts: Counter[str] = Counter()
    for info in memory.list_memories(include_superseded=args.include_superseded):
        counts.update(info.tags)
    ordered = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return TagsOutput(tags=[TagCount(tag=t, count=n) for t, n in ordered])


def render_tags(out: TagsOutput) -> str:
    if not out.tags:
        return "No memory has a tag yet."
    return "Tags (memories): " + ", ".join(f"{t.tag} ({t.count})" for t in out.tags)


# --------------------------------------------------------------------------- activity


class MemoryRecentInput(_Input):
    """What happened lately, newest first: memories written or updated, found by search,
    files indexed, sessions captured, API requests (failed ones with their error)."""

    limit: int = Field(default=20, ge=1, le=200, description="How many events at most.")
    since_days: float | None = Field(
        default=None, gt=0, le=3650, description="Only events of the last N days."
    )


class ActivityEvent(BaseModel):
    at: float
    when: str | None
    kind: str
    what: str
    error: str | None = None


class RecentOutput(BaseModel):
    events: list[ActivityEvent]
    errors: int
    not_recorded: str


def recent(memory: Memory, args: MemoryRecentInput) -> RecentOutput:
    ledger = ledger_path(memory.config)
    events: list[dict[str, Any]] = [
        *activity.index_events(memory.store.list_documents(), _source_of),
        *activity.memory_events(memory.list_memories(include_superseded=True)),
        *activity.capture_events(memory.memory_dir),
        *activity.request_events(ledger, args.limit),
    ]
    if args.since_days is not None:
        cutoff = time.time() - args.since_days * DAY
        events = [e for e in events if e["at"] >= cutoff]
    found = activity.newest(events, args.limit)
    return RecentOutput.model_validate(found)


def _source_of(meta: dict[str, Any]) -> str:
    return str(meta.get("source") or "memory")


def render_recent(out: RecentOutput) -> str:
    if not out.events:
        return "Nothing recorded yet."
    lines = [f"{len(out.events)} recent events, newest first ({out.errors} errors):"]
    for e in out.events:
        error = f" ERROR: {e.error}" if e.error else ""
        lines.append(f"- {e.when} {e.kind}: {e.what}{error}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- usage


class MemoryUsageInput(_Input):
    """API requests, tokens and estimated cost (USD) of the embedder and extractor, from the
    usage ledger (what `engram usage` shows)."""

    days: float = Field(default=30, gt=0, le=3650, description="Over the last N days.")
    by: list[GroupBy] = Field(
        default_factory=lambda: _BY_DAY.copy(),
        max_length=4,
        description=f"Group rows by any of {', '.join(GROUPS)}.",
    )


class UsageOutput(BaseModel):
    ledger: str
    since: float
    rows: list[UsageRow]
    total: UsageRow


def usage(memory: Memory, args: MemoryUsageInput) -> UsageOutput:
    path = ledger_path(memory.config)
    since = time.time() - args.days * DAY
    with UsageLedger(path) as book:
        rows = book.summary(list(dict.fromkeys(args.by)), since=since)
        total = book.summary((), since=since)[0]
    return UsageOutput(ledger=str(path), since=since, rows=rows, total=total)


def render_usage(out: UsageOutput) -> str:
    total = out.total
    if total.requests == 0:
        return "No API usage recorded in that time (local embedders cost nothing)."
    cost = "unknown" if total.cost_usd is None else f"${total.cost_usd:.4f}"
    if total.unpriced_requests:
        cost += f" (+{total.unpriced_requests} requests without a known price)"
    lines = [
        f"{total.requests} API requests ({total.errors} failed), "
        f"{total.input_tokens + total.output_tokens} tokens, estimated cost {cost}:"
    ]
    for row in out.rows:
        keys = [str(getattr(row, g)) for g in GROUPS if getattr(row, g) is not None]
        price = "?" if row.cost_usd is None else f"${row.cost_usd:.4f}"
        lines.append(
            f"- {' / '.join(keys) or 'all'}: {row.requests} requests, "
            f"{row.input_tokens + row.output_tokens} tokens, {price}"
        )
    return "\n".join(lines)
