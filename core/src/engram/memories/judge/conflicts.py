"""Reading memories that may contradict each other: the newer first, and a note naming the
older one.

Two memories linked ``conflicts_with`` both stay live (the judge was not sure one reverses the
other, or a superseded one was restored). Whoever reads them should see the newer first and know
an older, conflicting one exists. "Older" compares ``created_at`` (milliseconds) when the other
memory's is known (``created``: from the hits or the list at hand); otherwise the creation
second its id begins with (``20250131-120000-…``), so no file is read.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from engram.memories.files import MEMORY_ID
from engram.models import Hit


def conflicting_ids(meta: Mapping[str, Any]) -> list[str]:
    """The ids a memory's metadata (frontmatter or chunk metadata) says it conflicts with."""
    raw = meta.get("conflicts_with")
    return [str(v) for v in raw] if isinstance(raw, list) else []


def created_at_of(metas: Iterable[Mapping[str, Any]]) -> dict[str, str]:
    """Memory id → ``created_at``, for the memories at hand."""
    out: dict[str, str] = {}
    for meta in metas:
        memory_id, created = meta.get("id"), meta.get("created_at")
        if isinstance(memory_id, str) and isinstance(created, str):
            out[memory_id] = created
    return out


def older_conflicts(meta: Mapping[str, Any], created: Mapping[str, str] | None = None) -> list[str]:
    """The conflicting memories created before this one."""
    own = meta.get("id")
    if not isinstance(own, str):
        return []
    known = {**(created or {}), **created_at_of([meta])}
    mine = _when(own, known)
    return [other for other in conflicting_ids(meta) if _when(other, known) < mine]


def conflict_note(meta: Mapping[str, Any], created: Mapping[str, str] | None = None) -> str:
    """``" (conflicts with an older memory: ID)"``, or "" when there is none."""
    return note(older_conflicts(meta, created))


def note(older: Sequence[str]) -> str:
    if not older:
        return ""
    what = "an older memory" if len(older) == 1 else "older memories"
    return f" (conflicts with {what}: {', '.join(older)})"


def newest_first(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` in their order, except that a memory ranked below an older memory it conflicts
    with moves up just before it."""
    out = list(hits)
    created = created_at_of(h.chunk.metadata for h in out)
    for _ in range(len(out)):  # each pass moves one memory up: a bounded fixpoint
        moved = False
        for i, hit in enumerate(out):
            newer = set(conflicting_ids(hit.chunk.metadata)) - set(
                older_conflicts(hit.chunk.metadata, created)
            )
            later = next(
                (j for j in range(i + 1, len(out)) if out[j].chunk.metadata.get("id") in newer),
                None,
            )
            if later is not None:
                out.insert(i, out.pop(later))
                moved = True
                break
        if not moved:
            break
    return out


def _when(memory_id: str, created: Mapping[str, str]) -> str:
    """When a memory was created, as an ISO string that sorts with ``created_at`` values."""
    if memory_id in created:
        return created[memory_id]
    if MEMORY_ID.match(memory_id):
        d, t = memory_id[:8], memory_id[9:15]
        return f"{d[:4]}-{d[4:6]}-{d[6:8]}T{t[:2]}:{t[2:4]}:{t[4:6]}"
    return ""
