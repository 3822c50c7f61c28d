"""Recent activity: everything engram records durably, merged newest first.

engram keeps no log file (its warnings go to stderr and are gone), so the activity is rebuilt
from what does last: the index (when each document was indexed, and whether its embedding
failed, leaving it keyword-only), the memory files (written, updated), the memory folders'
access log (found by search or recall), the capture log (sessions captured) and the usage
ledger (every API request, failed ones with their error label). Nothing here writes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.errors import EngramError
from engram.filters import parse_iso, to_utc
from engram.memories.lifecycle.captures import CaptureLog
from engram.models import Document, MemoryInfo
from engram.usage import UsageLedger

Event = dict[str, Any]
NOT_RECORDED = (
    "engram keeps no log file: warnings printed while a command ran are not kept, and a failed "
    "capture is not recorded (it is retried). Errors shown here are failed API requests (usage "
    "ledger) and documents whose embedding failed (stored for keyword search only)."
)
KEYWORD_ONLY = "stored for keyword search only: the embedder failed"


def event(at: float, kind: str, what: str, error: str | None = None) -> Event:
    return {"at": at, "kind": kind, "what": what, "error": error}


def index_events(
    documents: dict[str, Document], source_of: Callable[[dict[str, Any]], str]
) -> list[Event]:
    """A document indexed, per document (its last indexing); keyword-only ones as errors."""
    events = []
    for doc_id, doc in documents.items():
        at = doc.metadata.get("indexed_at")
        if isinstance(at, int | float):
            error = None if doc.hash else KEYWORD_ONLY
            events.append(
                event(float(at), "indexed", f"{doc_id} ({source_of(doc.metadata)})", error)
            )
    return events


def memory_events(memories: Iterable[MemoryInfo]) -> list[Event]:
    """Memories written or updated, and the last time each was found (the access log)."""
    events = []
    for m in memories:
        changed = timestamp(m.touched_at)
        if changed is not None:
            events.append(
                event(changed, "memory updated" if m.updated_at else "memory written", m.title)
            )
        found = timestamp(m.last_accessed_at)
        if found is not None:
            times = "once" if m.access_count == 1 else f"{m.access_count} times"
            events.append(event(found, "memory found", f"{m.title} (found {times})"))
    return events


def capture_events(memory_dir: Path) -> list[Event]:
    """Sessions captured into memories (the capture log of the project's memory folder)."""
    try:
        with CaptureLog(memory_dir) as log:
            captured = log.read()
    except EngramError as exc:
        return [event(time.time(), "capture log", str(memory_dir), str(exc))]
    return [
        event(c.at, "session captured", f"{doc_id} ({c.turns} turns)")
        for doc_id, c in captured.items()
    ]


def request_events(ledger: Path, limit: int) -> list[Event]:
    """The latest API requests of the usage ledger, failed ones with their error label."""
    try:
        with UsageLedger(ledger) as book:
            rows = book.recent(limit)
    except EngramError as exc:
        return [event(time.time(), "usage ledger", str(ledger), str(exc))]
    return [
        event(
            r.at,
            f"{r.operation} request",
            f"{r.provider}/{r.model}, {r.input_tokens + r.output_tokens} tokens",
            r.error,
        )
        for r in rows
    ]


def newest(events: list[Event], limit: int) -> dict[str, Any]:
    """The ``limit`` newest events, with a readable time and the count of errors among them."""
    recent = sorted(events, key=lambda e: e["at"], reverse=True)[:limit]
    for item in recent:
        item["when"] = when(item["at"])
    return {
        "events": recent,
        "errors": sum(1 for e in recent if e["error"]),
        "not_recorded": NOT_RECORDED,
    }


def timestamp(iso: str | None) -> float | None:
    moment = parse_iso(iso) if iso else None
    return None if moment is None else to_utc(moment).timestamp()


def when(at: float | None) -> str | None:
    if at is None:
        return None
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
