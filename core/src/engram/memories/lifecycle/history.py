"""``engram history ID``: a memory, every memory it replaced, was replaced by or conflicts
with, and every earlier wording of each, oldest first.

The chain is read from the frontmatter alone (``supersedes`` on the newer memory,
``superseded_by`` on the older one, ``conflicts_with`` both ways) and the wordings from the
files (the body, and ``revisions``), so it all survives ``engram rebuild``. Either supersede
link is enough: a memory superseded by aging or condensing has only ``superseded_by``. Private
spans a person typed into a wording or a title are left out, as every read path leaves them out.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from engram.chunking import read_frontmatter
from engram.ingest.document_ids import document_id_for, document_path
from engram.memories.files import wording_of
from engram.memories.lifecycle.revisions import revisions_from
from engram.models import MemoryInfo
from engram.text.redact import strip_private


class HistoryEntry(BaseModel):
    """One wording in a chain: a memory's current text (``kind`` memory, with its status) or
    an earlier wording of it (``kind`` revision, numbered for ``engram restore --revision``)."""

    kind: Literal["memory", "revision"]
    memory_id: str | None
    path: str
    when: str | None
    title: str | None
    wording: str
    status: str
    revision: int | None = None
    why: str | None = None


class History(BaseModel):
    """The memory asked about, its chain oldest first (it is one of them), and every wording
    of the chain, oldest first."""

    memory: MemoryInfo
    chain: list[MemoryInfo]
    entries: list[HistoryEntry] = []


def history(memories: Sequence[MemoryInfo], target: Path, project_root: Path) -> History:
    """The supersede and conflict chain through the memory stored at ``target``."""
    by_id = {m.id: m for m in memories if m.id}
    doc_id = document_id_for(target, project_root)
    start = next(m for m in memories if m.path == doc_id)
    links: dict[str, set[str]] = {}
    for m in memories:
        if not m.id:
            continue
        others = [*m.supersedes, *m.conflicts_with]
        if m.superseded_by:
            others.append(m.superseded_by)
        for other in others:
            links.setdefault(m.id, set()).add(other)
            links.setdefault(other, set()).add(m.id)
    seen = {start.id} if start.id else set()
    todo = list(seen)
    while todo:  # everything linked to the start, either way
        current = todo.pop()
        for other in links.get(current, set()):
            if other not in seen and other in by_id:
                seen.add(other)
                todo.append(other)
    chain = sorted(
        (by_id[i] for i in seen) if start.id else [start],
        key=lambda m: (m.created_at or "", m.updated_at or "", m.id or ""),
    )
    entries = [e for m in chain for e in _entries(m, project_root)]
    entries.sort(key=lambda e: e.when or "")
    return History(memory=start, chain=chain, entries=entries)


def _entries(m: MemoryInfo, project_root: Path) -> list[HistoryEntry]:
    try:
        text = document_path(m.path, project_root).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    fm = read_frontmatter(text)
    out = [
        HistoryEntry(
            kind="revision",
            memory_id=m.id,
            path=m.path,
            when=r.when,
            title=_shown(r.title),
            wording=strip_private(r.wording),
            status=f"revision {n}",
            revision=n,
            why=_shown(r.why),
        )
        for n, r in enumerate(revisions_from(fm.metadata), start=1)
    ]
    state = m.status if m.live or not m.superseded_by else f"{m.status} by {m.superseded_by}"
    out.append(
        HistoryEntry(
            kind="memory",
            memory_id=m.id,
            path=m.path,
            when=m.touched_at,
            title=m.title,
            wording=strip_private(wording_of(dict(fm.metadata), fm.body)),
            status=state,
        )
    )
    return out


def _shown(text: str | None) -> str | None:
    """A revision's label as shown: a hand-typed private span left out (wordings too)."""
    return None if text is None else strip_private(text).strip() or None
