"""Links between live memories: ``conflicts_with`` (maybe a reversal, not sure: both stay
live, read paths show the newest first and say an older one conflicts) and ``related`` (close,
but something that carries meaning differs). Both memories name each other in their
frontmatter; the new memory is written with its side first, so a crash before the older file
is updated leaves a one-way link that ``engram index`` completes (``chains.repair``)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.chunking import read_frontmatter
from engram.lifecycle.memory_io import added, update_frontmatter, writable_path
from engram.writer import Writer

LINK_KEYS = ("conflicts_with", "related")


def link_back(writer: Writer, document_ids: Sequence[str], key: str, memory_id: str) -> list[str]:
    """Add ``memory_id`` to the ``key`` list of each memory; returns the documents changed."""
    changed = []
    for doc_id in document_ids:
        path = writable_path(writer, doc_id)
        meta = read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
        links = added(meta.get(key), [memory_id])
        if links is not None:
            update_frontmatter(writer, doc_id, {key: links})
            changed.append(doc_id)
    return changed


__all__ = ["LINK_KEYS", "added", "link_back"]
