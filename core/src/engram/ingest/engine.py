"""The one write path of every source (vault files, memory files, agent sessions).

Documents are embedded in batches. When the embedder fails (down, no key, someone else's code
raising anything), the batch is stored without vectors, searchable by keyword, and its records
keep no content hash, so the next run embeds it again: an index run never fails, or loses
anything, because embedding did.

Write order keeps a crash harmless: a document's chunks are upserted, then every other chunk
with its document id deleted (found in the store, whatever the old record listed, so chunks a
crash left behind go too), and only then is its record (id → content hash, chunk ids) written.
A missing or stale record always means "index this document again" on the next run. A store
that offers ``ReplacesDocuments`` does all three in one transaction instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from engram.errors import EngramError
from engram.ingest.report import IndexReport
from engram.models import Chunk, Document, InputType
from engram.protocols import Embedder, PrunesDocuments, ReplacesDocuments, Store

EMBED_BATCH = 128  # chunks per embedder call


@runtime_checkable
class EmbedsArrays(Protocol):
    """An embedder that also returns its vectors as read-only float32 arrays
    (``engram.embedding.cache.CachedEmbedder``, which every open memory embeds through): the chunks
    carry them to the store as they are, with no list of Python floats built and read back."""

    def embed_arrays(
        self, texts: Sequence[str], input_type: InputType = "document"
    ) -> list[npt.NDArray[np.float32]]: ...


@dataclass
class Pending:
    """A document to (re)write: its chunks (those with a vector are not embedded again), the
    record it replaces, and its record's metadata (the engine adds ``chunk_ids`` and
    ``indexed_at``)."""

    document_id: str
    hash: str
    chunks: list[Chunk]
    old: Document | None
    metadata: dict[str, Any] = field(default_factory=dict)


class DocumentWriter:
    """Collects pending documents and writes them a batch at a time; ``noun`` names what a
    document is in warnings ("files", "sessions")."""

    def __init__(self, store: Store, embedder: Embedder, report: IndexReport, noun: str) -> None:
        self.store = store
        self.embedder = embedder
        self.report = report
        self.noun = noun
        self._batch: list[Pending] = []

    def add(self, pending: Pending) -> None:
        self._batch.append(pending)
        if sum(len(p.chunks) for p in self._batch) >= EMBED_BATCH:
            self.flush()

    def flush(self) -> None:
        batch, self._batch = self._batch, []
        if not batch:
            return
        # A chunk that comes with its vector (its writer embedded that text already) keeps it.
        texts = [c.text for p in batch for c in p.chunks if c.vector is None]
        vectors = self._embed(texts, len(batch))
        fresh = iter(vectors or ())
        for pending in batch:
            chunks = pending.chunks
            if vectors is not None:
                chunks = [
                    c if c.vector is not None else c.model_copy(update={"vector": next(fresh)})
                    for c in chunks
                ]
            self._write(pending, chunks, complete=vectors is not None)

    def _embed(self, texts: list[str], documents: int) -> Sequence[Sequence[float]] | None:
        """The batch's vectors, or None (with a warning) when the embedder failed."""
        if not texts:
            return []
        embedder = self.embedder
        try:
            vectors: Sequence[Sequence[float]] = (
                embedder.embed_arrays(texts, input_type="document")  # type: ignore[assignment]
                if isinstance(embedder, EmbedsArrays)
                else embedder.embed(texts, input_type="document")
            )
            if len(vectors) != len(texts):
                raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
        except Exception as exc:  # someone else's code, maybe over a network: keep the run
            detail = str(exc) if isinstance(exc, EngramError) else f"{type(exc).__name__}: {exc}"
            self.report.warnings.append(
                f"embedder failed ({detail}); {documents} {self.noun} stored for keyword "
                "search only"
            )
            return None
        self.report.texts_embedded += len(texts)
        return vectors

    def _write(self, pending: Pending, chunks: list[Chunk], *, complete: bool) -> None:
        keep = {c.id for c in chunks}
        stale = [i for i in chunk_ids(pending.old) if i not in keep]
        report = self.report
        report.chunks_written += len(chunks)
        report.chunks_deleted += len(stale)
        if not chunks:
            report.empty += 1
        if not complete:
            report.pending_embeddings += 1
        metadata = {
            **pending.metadata,
            "chunk_ids": [c.id for c in chunks],
            "indexed_at": time.time(),
        }
        # An incomplete document keeps no hash, so the next run embeds it again.
        record = Document(
            id=pending.document_id, hash=pending.hash if complete else "", metadata=metadata
        )
        if isinstance(self.store, ReplacesDocuments):  # all of it in one write
            self.store.replace_document(record, chunks)
            return
        self._replace(pending.document_id, chunks)
        self.store.put_document(record)

    def _replace(self, document_id: str, chunks: list[Chunk]) -> None:
        """The document's chunks become exactly ``chunks``, in the store itself."""
        store = self.store
        if isinstance(store, PrunesDocuments):
            if chunks:
                store.upsert(chunks)
            store.prune_document(document_id, [c.id for c in chunks])
            return
        # No pruning: drop the document (its record too, so a crash here re-indexes it).
        store.delete_documents([document_id])
        if chunks:
            store.upsert(chunks)


def remove_documents(
    store: Store, known: dict[str, Document], removed: Iterable[str], report: IndexReport
) -> None:
    """Drop documents whose source is gone, counting their chunks."""
    ids = sorted(removed)
    if not ids:
        return
    report.removed += len(ids)
    report.chunks_deleted += sum(len(chunk_ids(known[d])) for d in ids)
    store.delete_documents(ids)


def chunk_ids(doc: Document | None) -> list[str]:
    """The chunk ids a document's record lists (none for a new document)."""
    if doc is None:
        return []
    ids = doc.metadata.get("chunk_ids")
    return [str(i) for i in ids] if isinstance(ids, list) else []
