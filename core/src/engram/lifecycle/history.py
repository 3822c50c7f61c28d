"""``engram history ID``: a memory and every memory it replaced or was replaced by.

The chain is read from the frontmatter alone (``supersedes`` on the newer memory,
``superseded_by`` on the older one), so it survives ``engram rebuild``. Either link is enough:
a memory superseded by aging or condensing has only ``superseded_by``.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from engram.ingest.vault import document_id_for
from engram.models import MemoryInfo


class History(BaseModel):
    """The memory asked about, and its chain oldest first (it is one of them)."""

    memory: MemoryInfo
    chain: list[MemoryInfo]


def history(memories: Sequence[MemoryInfo], target: Path, project_root: Path) -> History:
    """The supersede chain through the memory stored at ``target``."""
    by_id = {m.id: m for m in memories if m.id}
    doc_id = document_id_for(target, project_root)
    start = next(m for m in memories if m.path == doc_id)
    successors: dict[str, set[str]] = {}
    predecessors: dict[str, set[str]] = {}
    for m in memories:
        if not m.id:
            continue
        for old in m.supersedes:
            successors.setdefault(old, set()).add(m.id)
            predecessors.setdefault(m.id, set()).add(old)
        if m.superseded_by:
            successors.setdefault(m.id, set()).add(m.superseded_by)
            predecessors.setdefault(m.superseded_by, set()).add(m.id)
    if not start.id:
        return History(memory=start, chain=[start])
    seen = {start.id}
    todo = [start.id]
    while todo:  # everything linked to the start, either way
        current = todo.pop()
        for other in successors.get(current, set()) | predecessors.get(current, set()):
            if other not in seen and other in by_id:
                seen.add(other)
                todo.append(other)
    chain = sorted(
        (by_id[i] for i in seen), key=lambda m: (m.created_at or "", m.updated_at or "", m.id or "")
    )
    return History(memory=start, chain=chain)
