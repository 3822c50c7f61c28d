"""Chunks of a markdown file with their metadata, marked with the memory folder they come from.

Files in a memory folder get two derived metadata fields that search and the write path filter
on (vault notes get neither, so a note's own ``status: archived`` frontmatter hides nothing):

- ``memory_scope``: ``project``, ``user`` or ``external`` (which folder holds the file);
- ``live``: False once the memory was superseded or archived (from its frontmatter, or because
  a newer memory names it in ``supersedes``: that list is the truth when the older file could
  not be marked), so search and recall leave history out unless asked for it;
- ``subject_key`` and ``subject_keys``, when the frontmatter names a ``subject``, so search
  filters by it whatever its case (``engram.memories.subjects``).

A memory's ``revisions`` (earlier wordings) are history: they stay out of the chunk metadata;
``revision_count`` says how many there are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from pathlib import Path
from typing import Any, Protocol

from engram.chunking import ChunkedDocument, Chunker, ChunkSpan, chunk_ids
from engram.chunking.collection import chunk_fields
from engram.ingest.sync import SOURCE
from engram.memories.fields import check_fields
from engram.memories.files import status_of
from engram.memories.scopes import MemoryFolder, folder_of
from engram.memories.subjects import subject_fields
from engram.models import Chunk


class MakeChunks(Protocol):
    """``(document_id, text, digest)`` → the document's chunks and warnings; ``parsed``: the
    chunker's reading of exactly ``text`` when the caller already has it (not cut again)."""

    def __call__(
        self, document_id: str, text: str, digest: str, parsed: ChunkedDocument | None = None
    ) -> tuple[list[Chunk], list[str]]: ...


def scoped_chunks(
    chunker: Chunker,
    folders: Sequence[MemoryFolder],
    project_root: Path,
    retired: Callable[[], Collection[str]] = frozenset,
) -> MakeChunks:
    """A ``make_chunks`` for ``sync_files`` that adds ``memory_scope``, ``live`` and the subject
    keys; ``retired`` gives the ids a newer memory supersedes (not live, whatever their file
    says)."""
    root = str(project_root.resolve())

    def make(
        document_id: str, text: str, digest: str, parsed: ChunkedDocument | None = None
    ) -> tuple[list[Chunk], list[str]]:
        chunks, warnings = chunk_markdown_document(chunker, document_id, text, digest, parsed)
        # What Path(...).resolve() gives, as text (the Paths cost more than the lstat calls).
        folder = _folder_of(folders, os.path.realpath(os.path.join(root, document_id)))
        if folder is None or not chunks:
            return chunks, warnings
        meta = chunks[0].metadata
        live = status_of(meta) == "live" and meta.get("id") not in retired()
        extra: dict[str, Any] = {"memory_scope": folder.scope, "live": live}
        extra.update(subject_fields(meta.get("subject")))
        revisions = meta.get("revisions")
        if isinstance(revisions, list):
            extra["revision_count"] = len(revisions)
        warnings = [*warnings, *check_fields(meta)]
        return [
            c.model_copy(
                update={
                    "metadata": {
                        **{k: v for k, v in c.metadata.items() if k != "revisions"},
                        **extra,
                    }
                }
            )
            for c in chunks
        ], warnings

    return make


def _folder_of(folders: Sequence[MemoryFolder], location: str) -> MemoryFolder | None:
    """``folder_of`` a resolved location; the usual answer (a vault note: in no memory folder)
    without a ``Path``: a folder holds the location only if its text starts with the folder's."""
    here = os.path.normcase(location)
    if not any(here.startswith(os.path.normcase(str(f.path))) for f in folders):
        return None
    return folder_of(folders, Path(location))


def chunk_markdown_document(
    chunker: Chunker,
    document_id: str,
    text: str,
    digest: str,
    parsed: ChunkedDocument | None = None,
) -> tuple[list[Chunk], list[str]]:
    """Chunks of one markdown document with their metadata (frontmatter + where they come
    from), and any warning met while reading it (e.g. malformed frontmatter); ``parsed``: the
    chunker's reading of ``text``, when the caller has it."""
    if parsed is None:
        parsed = chunker.chunk_document(text)
    spans = parsed.chunks
    title = _title(parsed.metadata, spans, document_id)
    # Frontmatter; for a collection document, its collection, id and the caller's keys.
    fields = chunk_fields(parsed.metadata)
    chunks = []
    for span, cid in zip(spans, chunk_ids(document_id, spans), strict=True):
        metadata: dict[str, Any] = dict(fields)
        metadata.update(
            source=SOURCE,
            path=document_id,
            title=title,
            start_line=span.start_line,
            end_line=span.end_line,
            headings=list(span.headings),
        )
        chunks.append(
            Chunk(
                id=cid,
                document_id=document_id,
                document_hash=digest,
                text=span.text,
                metadata=metadata,
            )
        )
    return chunks, parsed.warnings


def _title(frontmatter: dict[str, Any], spans: Sequence[ChunkSpan], document_id: str) -> str:
    title = frontmatter.get("title")
    if isinstance(title, str) and title.strip():
        return title.strip()
    for span in spans:
        if span.headings:
            return str(span.headings[0])
    return Path(document_id).stem
