"""Links between live memories: ``conflicts_with`` (maybe a reversal, not sure: both stay
live, read paths show the newest first and say an older one conflicts) and ``related`` (close,
but something that carries meaning differs). Both memories name each other in their
frontmatter; the new memory is written with its side first, so a crash before the older file
is updated leaves a one-way link that ``engram index`` completes (``chains.repair``)."""

from __future__ import annotations

from collections.abc import Sequence

from engram.chunking import read_frontmatter
from engram.memories.lifecycle.memory_io import Written, added, update_frontmatter, writable_path
from engram.memories.writer import Writer

LINK_KEYS = ("conflicts_with", "related")


def link_back(
    writer: Writer, document_ids: Sequence[str], key: str, memory_id: str
) -> dict[str, Written]:
    """Add ``memory_id`` to the ``key`` list of each memory; returns the documents changed,
    with what was written (to index without reading them back)."""
    changed = {}
    for doc_id in document_ids:
        text = writable_path(writer, doc_id).read_text(encoding="utf-8")
        links = added(read_frontmatter(text).metadata.get(key), [memory_id])
        if links is not None:
            changed[doc_id] = Written(update_frontmatter(writer, doc_id, {key: links}, text))
    return changed


__all__ = ["LINK_KEYS", "added", "link_back"]
