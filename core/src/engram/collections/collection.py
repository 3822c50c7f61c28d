"""A named set of documents with the caller's own ids: what a LangChain or LlamaIndex vector
store needs of engram.

Each document is a markdown file (``engram.collections.files``) indexed like any vault note,
so ``engram rebuild`` restores a collection from its files, ``engram search`` finds it, and
nothing of it lives only in a derived index. ``add`` writes the files and indexes exactly those
files; ``delete`` removes both.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engram.chunking import collection as files
from engram.errors import EngramError, InvalidMemory
from engram.filters import And, Eq, Filter, Not, Or, matches
from engram.ingest.document_ids import document_id_for
from engram.ingest.report import IndexReport
from engram.ingest.sync import sync_files
from engram.ingest.vault import VaultFile
from engram.memories import entry as search_entry
from engram.memories.files import replace_file
from engram.memories.policy import MAX_POOL, MemorySearch, pools
from engram.memories.writer import Writer
from engram.models import Chunk, Hit, SearchMode
from engram.stores.checks import check_dimension, check_finite
from engram.text.redact import strip_private

log = logging.getLogger(__name__)


class CollectionDocument(BaseModel):
    """One document: the caller's id, its text and metadata, returned exactly as given (after
    ``<private>`` spans are stripped)."""

    model_config = ConfigDict(frozen=True)

    id: str
    text: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class CollectionHit(BaseModel):
    """A document found by a search; ``score`` is higher for better (cosine in vector mode)."""

    document: CollectionDocument
    score: float


class Collection:
    """The documents under ``<[memory] collections_dir>/<name>/``."""

    def __init__(self, writer: Writer, search: MemorySearch, name: str) -> None:
        self.name = files.check_name(name)
        self._writer = writer
        self._search = search
        self.folder = (writer.config.resolve(writer.config.memory.collections_dir) / name).resolve()

    # -- writing -------------------------------------------------------------------------------
    def add(
        self,
        documents: Sequence[CollectionDocument],
        *,
        vectors: Mapping[str, Sequence[float]] | None = None,
    ) -> list[str]:
        """Write and index ``documents``; an id already present is overwritten. Every file is
        checked before any is written, so a bad document leaves the collection as it was.

        ``vectors``: document id → the vector this memory's embedder made of exactly that
        document's text (a framework that embedded it already). It is stored for the chunk
        whose text is the whole document instead of embedding that text again; a document cut
        into several chunks, or whose ``<private>`` spans were removed, is embedded as usual
        (the vector is not of any chunk's text). A vector of another dimension, or with NaN or
        infinite values, is an error before anything is written."""
        rendered: dict[Path, str] = {}
        given: dict[str, tuple[str, list[float]]] = {}
        for doc in documents:
            text = strip_private(doc.text)
            metadata = files.clean_metadata(doc.metadata)
            content = files.render(self.name, doc.id, text, metadata)
            self._check_size(doc.id, content)
            path = self._path(doc.id)
            rendered[path] = content
            if vectors is not None and doc.id in vectors:
                vector = self._checked(doc.id, vectors[doc.id])
                if text == doc.text:  # a vector of private words is never stored
                    given[self._document_id(path)] = (text, vector)
        if not rendered:
            return []
        self._writer.check_identity(writing=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        for path, content in rendered.items():
            replace_file(path, content)
        self._index(list(rendered), given)
        return [doc.id for doc in documents]

    def _checked(self, document_id: str, vector: Sequence[float]) -> list[float]:
        what = f"the vector given for document {document_id[:80]!r}"
        arr = check_finite(vector, what)
        check_dimension(len(arr), self._writer.identity, what)
        return [float(x) for x in arr]

    def delete(self, ids: Sequence[str]) -> None:
        """Remove these documents (files and chunks); unknown ids are not an error."""
        paths = [self._path(i) for i in ids]
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        self._writer.store.delete_documents([self._document_id(p) for p in paths])

    def clear(self) -> None:
        """Remove every document of this collection."""
        for path in self._files():
            path.unlink()
        prefix = self._document_id(self.folder) + "/"
        indexed = self._writer.store.list_documents()
        self._writer.store.delete_documents(sorted(d for d in indexed if d.startswith(prefix)))

    # -- reading -------------------------------------------------------------------------------
    def get(self, ids: Sequence[str]) -> list[CollectionDocument]:
        """The documents with these ids, in that order; unknown ids are left out."""
        found = []
        for document_id in ids:
            doc = self._read(self._path(document_id))
            if doc is not None and doc.id == document_id:
                found.append(doc)
        return found

    def ids(self) -> list[str]:
        return [doc.id for doc in map(self._read, self._files()) if doc is not None]

    def count(self) -> int:
        return len(self.ids())

    def matching(self, flt: Filter) -> list[str]:
        """The ids of the documents whose metadata match ``flt``, read from the files (the
        source of truth) with the filter semantics every store follows."""
        docs = (self._read(path) for path in self._files())
        return [doc.id for doc in docs if doc is not None and matches(flt, doc.metadata)]

    @property
    def dimension(self) -> int:
        return self._writer.embedder.dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        checked = [files.check_text("text to embed", t) for t in texts]
        return self._writer.embedder.embed(checked, "document")

    def embed_query(self, text: str) -> list[float]:
        return self._writer.embedder.embed([files.check_text("query", text)], "query")[0]

    def search(
        self,
        query: str,
        *,
        k: int = 4,
        mode: SearchMode = "hybrid",
        filter: Filter | None = None,
    ) -> list[CollectionHit]:
        """The ``k`` best documents for ``query``, best first; ``filter`` names the caller's
        metadata keys. ``vector`` mode scores by cosine similarity and keeps every hit, as a
        vector store does; ``hybrid`` is engram's search, ``[search] min_score`` included. An
        embedder that is down degrades both to keyword search (logged), like any search."""
        files.check_text("query", query)
        if mode == "vector":
            try:
                vector = self.embed_query(query)
            except Exception as exc:  # the embedder is someone else's code, maybe remote
                log.warning("embedder failed (%s); searching %s by keyword", exc, self.name)
                mode = "keyword"
            else:
                return self.search_by_vector(vector, k=k, filter=filter)
        result = search_entry.search(
            self._search,
            query,
            mode=mode,
            limit=k,
            filter=self._scoped(filter),
            per_document=True,
            recency_weight=0.0,
            typed=False,  # the caller's metadata keys are its own: no memory types here
        )
        if result.degraded:
            log.warning("%s searched by keyword only: %s", self.name, "; ".join(result.warnings))
        return self._documents(result.hits, k)

    def search_by_vector(
        self, vector: Sequence[float], *, k: int = 4, filter: Filter | None = None
    ) -> list[CollectionHit]:
        """The ``k`` documents nearest to ``vector`` (cosine similarity), best first."""
        self._writer.check_identity(writing=False)
        scoped = self._scoped(filter)
        found: list[CollectionHit] = []
        for pool in pools(k):
            hits = self._writer.store.vector_search(list(vector), pool, scoped)
            found = self._documents(hits, k)
            if len(found) >= k or len(hits) < pool:
                break
        return found

    def candidates_with_vectors(
        self, vector: Sequence[float], *, k: int, filter: Filter | None = None
    ) -> list[tuple[CollectionHit, list[float]]]:
        """The ``k`` nearest documents, each with its best chunk's stored vector (for maximal
        marginal relevance: nothing is embedded again). A chunk stored without a vector
        (waiting for an embedder) is left out."""
        hits = self.search_by_vector(vector, k=k, filter=filter)
        scoped = self._scoped(filter)
        pool = self._writer.store.vector_search(list(vector), min(MAX_POOL, k * 8), scoped)
        best: dict[str, str] = {}
        for hit in pool:
            document_id = hit.chunk.metadata.get(files.ID_FIELD)
            if isinstance(document_id, str):
                best.setdefault(document_id, hit.chunk.id)
        wanted = [best[h.document.id] for h in hits if h.document.id in best]
        vectors = {c.id: c.vector for c in self._writer.store.get(wanted) if c.vector}
        return [
            (hit, list(vectors[best[hit.document.id]]))
            for hit in hits
            if best.get(hit.document.id) in vectors
        ]

    # -- helpers -------------------------------------------------------------------------------
    def _check_size(self, document_id: str, content: str) -> None:
        limit = self._writer.config.vault.max_file_bytes
        if len(content.encode("utf-8")) > limit:
            raise InvalidMemory(
                f"document {document_id[:80]!r} is larger than {limit} bytes "
                "([vault] max_file_bytes); split it, or raise the limit"
            )

    def _path(self, document_id: str) -> Path:
        return self.folder / files.file_name(files.check_id(document_id))

    def _document_id(self, path: Path) -> str:
        return document_id_for(path, self._writer.root)

    def _files(self) -> list[Path]:
        return sorted(self.folder.glob("*.md")) if self.folder.is_dir() else []

    def _read(self, path: Path) -> CollectionDocument | None:
        parsed = files.read(path)
        if parsed is None or parsed[0] != self.name:
            return None
        _, document_id, text, metadata = parsed
        return CollectionDocument(id=document_id, text=text, metadata=metadata)

    def _index(
        self, paths: list[Path], given: Mapping[str, tuple[str, list[float]]] | None = None
    ) -> IndexReport:
        """Index the files at ``paths``; a chunk whose text is one of ``given`` (by document
        id: the text and its vector) keeps that vector, not embedded again."""
        found = [VaultFile(p, self.folder, self._document_id(p)) for p in paths]
        known = given or {}

        def make_chunks(document_id: str, text: str, digest: str) -> tuple[list[Chunk], list[str]]:
            chunks, warnings = self._writer.make_chunks(document_id, text, digest)
            held = known.get(document_id)
            if held is None:
                return chunks, warnings
            body, vector = held
            return [
                c.model_copy(update={"vector": vector}) if c.text == body else c for c in chunks
            ], warnings

        report = sync_files(
            found,
            paths,
            self._writer.store,
            self._writer.embedder,
            make_chunks,
            max_file_bytes=self._writer.config.vault.max_file_bytes,
        )
        if report.skipped:
            skipped = report.skipped[0]
            raise EngramError(f"{skipped.path} was not indexed: {skipped.reason}")
        return report

    def _scoped(self, flt: Filter | None) -> Filter:
        mine = Eq(field=files.COLLECTION_FIELD, value=self.name)
        return mine if flt is None else And(filters=[mine, prefixed(flt)])

    def _documents(self, hits: Sequence[Hit], k: int) -> list[CollectionHit]:
        """One hit per document (its best chunk), read back from its file."""
        found: list[CollectionHit] = []
        seen: set[str] = set()
        for hit in hits:
            document_id = hit.chunk.metadata.get(files.ID_FIELD)
            if not isinstance(document_id, str) or document_id in seen:
                continue
            seen.add(document_id)
            doc = self._read(self._path(document_id))
            if doc is not None:
                found.append(CollectionHit(document=doc, score=hit.score))
            if len(found) == k:
                break
        return found


def prefixed(flt: Filter) -> Filter:
    """``flt`` over the caller's metadata keys, rewritten to the chunk fields that hold them."""
    if isinstance(flt, And | Or):
        return flt.model_copy(update={"filters": [prefixed(f) for f in flt.filters]})
    if isinstance(flt, Not):
        return flt.model_copy(update={"filter": prefixed(flt.filter)})
    return flt.model_copy(update={"field": files.META_PREFIX + flt.field})
