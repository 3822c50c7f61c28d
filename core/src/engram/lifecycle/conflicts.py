"""Reading memories that may contradict each other: the newer first, and a note naming the
older one.

Two memories linked ``conflicts_with`` both stay live (the judge was not sure one reverses the
other, or a superseded one was restored). Whoever reads them should see the newer first and know
an older, conflicting one exists. Memory ids begin with their creation time
(``20250131-120000-…``), so "older" needs no file read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from engram.models import Hit


def conflicting_ids(meta: Mapping[str, Any]) -> list[str]:
    """The ids a memory's metadata (frontmatter or chunk metadata) says it conflicts with."""
    raw = meta.get("conflicts_with")
    return [str(v) for v in raw] if isinstance(raw, list) else []


def older_conflicts(meta: Mapping[str, Any]) -> list[str]:
    """The conflicting memories created before this one."""
    own = meta.get("id")
    if not isinstance(own, str):
        return []
    return [other for other in conflicting_ids(meta) if other < own]


def conflict_note(meta: Mapping[str, Any]) -> str:
    """``" (conflicts with an older memory: ID)"``, or "" when there is none."""
    older = older_conflicts(meta)
    if not older:
        return ""
    what = "an older memory" if len(older) == 1 else "older memories"
    return f" (conflicts with {what}: {', '.join(older)})"


def newest_first(hits: Sequence[Hit]) -> list[Hit]:
    """``hits`` in their order, except that a memory ranked below an older memory it conflicts
    with moves up just before it."""
    out = list(hits)
    for _ in range(len(out)):  # each pass moves one memory up; a bounded fixpoint
        moved = False
        for i, hit in enumerate(out):
            own = hit.chunk.metadata.get("id")
            if not isinstance(own, str):
                continue
            rivals = set(conflicting_ids(hit.chunk.metadata))
            later = next(
                (
                    j
                    for j in range(i + 1, len(out))
                    if out[j].chunk.metadata.get("id") in rivals
                    and str(out[j].chunk.metadata.get("id")) > own
                ),
                None,
            )
            if later is not None:
                out.insert(i, out.pop(later))
                moved = True
                break
        if not moved:
            break
    return out
