"""``ChromaStore``: the engram Store protocol over Chroma, embedded or against a server.

- Chunks live in one collection (cosine space): id, embedding, text as the document, metadata
  encoded by ``records.py``. Document records and the index identity live in
  ``<collection>__engram_meta``; ``<collection>__engram_log`` is the change log (``changelog.py``).
- Vector search asks Chroma's HNSW index for ``k + 10`` candidates, then re-scores those
  candidates exactly (float64 cosine of the stored vectors) and keeps the best ``k``. A filter is
  pushed down as a ``where`` when Chroma can express it exactly; otherwise the exact set of
  matching ids is computed first and the search runs over those ids only, so a filtered top-k is
  never a post-filtered truncated list. The reads are ``reads.py``; rows and batches for writes,
  ``writes.py``.
- Keyword search is BM25 over a keyword index kept in step with the collection (``keyword.py``,
  ``sync.py``); a filter is applied to its ranking in pages, exactly.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, TypeVar, cast

import numpy as np
from chromadb.api.types import Where
from chromadb.errors import NotFoundError

from engram import (
    Chunk,
    ClosingStore,
    Document,
    Filter,
    Hit,
    IndexIdentity,
    StoreCapability,
    StoreError,
    check_dimension,
    check_identity,
)
from engram_chroma import changelog, reads, records, sync, vectors, writes
from engram_chroma.changelog import batched
from engram_chroma.connection import (
    Collections,
    chroma_errors,
    drop_collections,
    open_client,
    open_collections,
)
from engram_chroma.keyword import KeywordIndex, match_expression
from engram_chroma.options import ChromaOptions
from engram_chroma.where import translate

T = TypeVar("T")


class ChromaStore(ClosingStore):
    """Chunks, documents and the identity in Chroma; keyword ranking from a synced BM25 index."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset(
        {"vector", "keyword", "filter", "persistent"}
    )

    def __init__(self, options: ChromaOptions | None = None) -> None:
        self.options = options if options is not None else ChromaOptions()
        # A server is written by many machines: core keeps their origins apart.
        self.shared = self.options.mode == "server"
        self._client = open_client(self.options)
        self._lock = threading.RLock()
        self._known_identity: IndexIdentity | None = None  # cached once set; reset clears it
        try:
            self._cols = self._open()
            self._index = KeywordIndex(self._index_path())
        except BaseException:
            self._close_client()
            raise

    # -- plumbing -----------------------------------------------------------------------------

    def close(self) -> None:
        with contextlib.suppress(AttributeError):
            self._index.close()
        self._close_client()

    @property
    def collections(self) -> Collections:
        """The Chroma collections, for diagnostics and tests; do not write outside the API."""
        return self._cols

    def diagnostics(self) -> dict[str, Any]:
        """What ``engram doctor`` shows: where the data is and where the keyword index is."""
        where = self._index_path()
        return {
            "location": self.options.where,
            "collection": self.options.collection,
            "keyword_index": str(where) if where else "memory",
        }

    def _close_client(self) -> None:
        if self.options.mode == "server":
            return  # shared by the stores of this process (see connection._server_client)
        close = getattr(self._client, "close", None)
        if close is not None:
            with contextlib.suppress(Exception):
                close()

    def _open(self) -> Collections:
        with chroma_errors(self.options, "opening its collections", self._client):
            return open_collections(self._client, self.options)

    def _index_path(self) -> Path | None:
        """Where the keyword index file lives (None: in memory)."""
        o = self.options
        name = f"engram-keywords-{o.collection}.sqlite3"
        if o.keyword_cache is None:
            return o.path / name if o.mode == "embedded" else None
        scope = f"{o.mode}|{o.path.resolve() if o.mode == 'embedded' else o.where}"
        digest = hashlib.sha256(f"{scope}|{o.tenant}|{o.database}".encode()).hexdigest()[:12]
        return o.keyword_cache / f"engram-keywords-{o.collection}-{digest}.sqlite3"

    def _call(self, action: str, fn: Callable[[Collections], T]) -> T:
        """Run ``fn`` on the collections, translating errors; when another client has dropped
        them (``reset``), reopen them once and run again (every operation is idempotent)."""
        for attempt in (1, 2):
            try:
                with chroma_errors(self.options, action, self._client):
                    return fn(self._cols)
            except NotFoundError as exc:
                if attempt == 2:
                    raise StoreError(
                        f"{self.options.where} lost its collections while {action} ({exc}); "
                        f"another client may be resetting the store: run the command again"
                    ) from None
                self._known_identity = None
                self._cols = self._open()
        raise AssertionError("unreachable")

    def _identity(self, cols: Collections) -> IndexIdentity | None:
        """The recorded identity, cached once found for the hot paths (upsert, vector search).
        It changes only through a reset, which drops the collections: the next use of the old
        ones fails with ``NotFoundError``, and ``_call`` then reopens and clears the cache."""
        if self._known_identity is None:
            self._known_identity = _read_identity(cols)
        return self._known_identity

    def _fetch(self, action: str, ids: Sequence[str]) -> dict[str, Chunk]:
        return self._call(action, lambda cols: reads.fetch(cols.chunks, ids))

    # -- identity -----------------------------------------------------------------------------

    def get_identity(self) -> IndexIdentity | None:
        """Read from Chroma every time (another client may have reset the store)."""

        def run(cols: Collections) -> IndexIdentity | None:
            self._known_identity = None
            return self._identity(cols)

        return self._call("reading the index identity", run)

    def set_identity(self, identity: IndexIdentity) -> None:
        check_identity(None, identity)  # the type, before Chroma is touched

        def run(cols: Collections) -> None:
            current = self._identity(cols)
            if current is None:
                if cols.chunks.count() > 0:
                    raise StoreError(
                        f"the Chroma collection {self.options.collection!r} holds records that "
                        f"engram did not write (it has no index identity); set [store] "
                        f"collection to another name, or delete that collection"
                    )
                # add() keeps the first record of an id: with two clients racing, one identity
                # wins and the other is compared with it below.
                cols.meta.add(
                    ids=[records.IDENTITY_ID],
                    embeddings=changelog.ONE,
                    metadatas=[records.identity_record(identity)],
                )
                current = self._identity(cols)
            if current is not None:
                check_identity(current, identity, holder="this Chroma collection", fix=_OTHER_NAME)

        self._call("recording the index identity", run)

    # -- chunks -------------------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        batch = list(chunks)
        for c in batch:
            if not isinstance(c, Chunk):
                raise StoreError(
                    f"upsert expects engram.Chunk objects, got {type(c).__name__}; build them "
                    f"with Chunk(id=..., document_id=..., text=...)"
                )
        latest = list({c.id: c for c in batch}.values())  # a repeated id: the last one wins
        if not latest:
            return

        def run(cols: Collections) -> None:
            identity = self._identity(cols)
            rows = [writes.encode(c, identity) for c in latest]  # every check before any write
            for part in writes.batches(rows):
                self._write(cols, part)

        self._call("writing chunks", run)

    def _write(self, cols: Collections, rows: list[writes.Row]) -> None:
        """One Chroma upsert, announced in the change log and applied to the keyword index."""
        stamp = changelog.new_stamp()
        ids = [r[0] for r in rows]
        for row in rows:
            row[3][records.STAMP_KEY] = stamp
        writes.forget_old_keys(cols.chunks, rows)
        changelog.announce(cols.log, stamp, "upsert", ids)
        cols.chunks.upsert(
            ids=ids,
            embeddings=np.asarray([r[1] for r in rows], dtype=np.float32),
            documents=[r[2] for r in rows],
            metadatas=[r[3] for r in rows],
        )
        sync.apply_own(self._index, stamp, "upsert", ids, [r[2] for r in rows])

    def _delete(self, cols: Collections, ids: Sequence[str]) -> None:
        """Delete chunks, a batch at a time, each announced and applied to the keyword index."""
        for part in batched(list(ids), writes.WRITE_BATCH):
            stamp = changelog.new_stamp()
            changelog.announce(cols.log, stamp, "delete", part)
            cols.chunks.delete(ids=list(part))
            sync.apply_own(self._index, stamp, "delete", part)

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        wanted = list(ids)
        if not wanted:
            return []
        found = self._fetch("reading chunks", wanted)
        return [found[i] for i in wanted if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        unique = sorted({i for i in ids if isinstance(i, str) and i})
        if unique:
            self._call(
                "deleting chunks", lambda cols: self._delete(cols, reads.existing(cols, unique))
            )

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        docs = sorted({d for d in document_ids if isinstance(d, str) and d})
        if not docs:
            return

        def run(cols: Collections) -> None:
            victims: list[str] = []
            for part in batched(docs, 100):
                where = cast(Where, {records.DOCUMENT_KEY: {"$in": list(part)}})
                victims += cols.chunks.get(where=where, include=reads.NOTHING)["ids"]
            self._delete(cols, sorted(set(victims)))
            # Chunks first, records last: a crash in between leaves a record whose document is
            # deleted again by the next sync, never chunks nobody knows about.
            for part in batched([records.DOCUMENT_PREFIX + d for d in docs], changelog.PAGE):
                cols.meta.delete(ids=list(part))

        self._call("deleting documents", run)

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None:
        """Every chunk of ``document_id`` not in ``keep`` goes (found by its document id)."""
        kept = set(keep)

        def run(cols: Collections) -> None:
            where = cast(Where, {records.DOCUMENT_KEY: document_id})
            found = cols.chunks.get(where=where, include=reads.NOTHING)["ids"]
            self._delete(cols, sorted(i for i in found if i not in kept))

        self._call("deleting chunks", run)

    def delete_where(self, filter: Filter) -> None:
        pushdown = translate(filter)
        self._call(
            "deleting chunks by filter",
            lambda cols: self._delete(cols, reads.matching_ids(cols, filter, pushdown)),
        )

    def count(self, filter: Filter | None = None) -> int:
        if filter is None:
            return self._call("counting chunks", lambda cols: cols.chunks.count())
        pushdown = translate(filter)
        return self._call(
            "counting chunks", lambda cols: len(reads.matching_ids(cols, filter, pushdown))
        )

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        """Every chunk, by id, in lists of ``batch_size``: the ids are a snapshot taken at the
        start; chunks deleted meanwhile are left out."""
        if batch_size < 1:
            raise StoreError(f"batch_size must be at least 1 (got {batch_size})")
        every = sorted(self._call("listing chunks", reads.all_ids))
        return self._iter(every, batch_size)

    def _iter(self, every: list[str], batch_size: int) -> Iterator[list[Chunk]]:
        for part in batched(every, batch_size):
            found = self._fetch("reading chunks", part)
            chunks = [found[i] for i in part if i in found]
            if chunks:
                yield chunks

    # -- documents ----------------------------------------------------------------------------

    def put_document(self, document: Document) -> None:
        record_id, metadata = records.document_record(document)
        self._call(
            "writing a document record",
            lambda cols: cols.meta.upsert(
                ids=[record_id], embeddings=changelog.ONE, metadatas=[metadata]
            ),
        )

    def list_documents(self) -> dict[str, Document]:
        def run(cols: Collections) -> dict[str, Document]:
            # The meta collection holds document records and the identity: reading it whole is
            # quicker than asking Chroma to filter it.
            got = cols.meta.get(include=reads.METADATA)
            docs = [
                records.to_document(m)
                for m in got["metadatas"] or []
                if m and m.get(records.KIND_KEY) == records.DOCUMENT_KIND
            ]
            return {d.id: d for d in sorted(docs, key=lambda d: d.id)}

        return self._call("listing documents", run)

    # -- search -------------------------------------------------------------------------------

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """The ``k`` chunks most similar (cosine) to ``vector`` among those ``filter`` keeps."""
        _check_k(k)
        query = vectors.check_values(vector, "the query vector", stored=False)
        pushdown = translate(filter)

        def run(cols: Collections) -> list[Hit]:
            identity = self._identity(cols)
            if identity is None:
                return []
            check_dimension(len(query), identity, "the query vector")
            if k == 0 or pushdown.nothing:
                return []
            if pushdown.exact:
                return reads.nearest(cols.chunks, query, k, pushdown.where, None)
            allowed = reads.matching_ids(cols, filter, pushdown, with_vector=True)
            return reads.nearest(cols.chunks, query, k, None, allowed) if allowed else []

        return self._call("searching vectors", run)

    def keyword_ceiling(self, query: str) -> float | None:
        """The query's keyword ceiling over the keyword index (``engram.KeywordCeiling``)."""
        if match_expression(query) is None:
            return None
        with self._index.lock:
            self._call("updating the keyword index", lambda cols: sync.refresh(self._index, cols))
            return self._index.ceiling(query)

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """BM25 over the chunk words; a chunk matches if it holds any word of ``query``."""
        _check_k(k)
        pushdown = translate(filter)
        expression = match_expression(query)
        if expression is None or k == 0 or pushdown.nothing:
            return []
        with self._index.lock:
            self._call("updating the keyword index", lambda cols: sync.refresh(self._index, cols))
            ranked: list[tuple[str, float]] = []
            offset = 0
            page = k + reads.CANDIDATE_MARGIN if pushdown.everything else max(10 * k, 100)
            while len(ranked) < k:
                candidates = self._index.search(expression, page, offset)
                if not candidates:
                    break
                offset += len(candidates)
                ids = [i for i, _ in candidates]
                kept = self._call(
                    "filtering keyword hits", functools.partial(reads.keep, ids=ids, flt=filter)
                )
                ranked += [(i, score) for i, score in candidates if i in kept]
                page *= 4
        found = self._fetch("reading keyword hits", [i for i, _ in ranked[:k]])
        return [
            Hit(chunk=found[i], score=score, keyword_score=score)
            for i, score in ranked[:k]
            if i in found
        ]

    # -- lifecycle ----------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop the three collections and start empty (no identity); the keyword index too."""
        with self._lock, chroma_errors(self.options, "resetting the store", self._client):
            self._known_identity = None
            drop_collections(self._client, self.options)
            self._cols = open_collections(self._client, self.options)
            sync.reset(self._index, self._cols)


# -- helpers ------------------------------------------------------------------------------------


def _read_identity(cols: Collections) -> IndexIdentity | None:
    """The identity; none at all while chunks engram wrote are there means it was lost."""
    got = cols.meta.get(ids=[records.IDENTITY_ID], include=reads.METADATA)
    metas = got["metadatas"] or []
    identity = records.to_identity(metas[0] if metas else None)
    if identity is None:
        sample = cols.chunks.get(limit=1, include=reads.METADATA)["metadatas"] or []
        if sample and records.written_by_engram(sample[0]):
            raise records.Unreadable("its index identity record is gone, but its chunks remain")
    return identity


_OTHER_NAME = ", or point [store] collection at another name"


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more (got {k})")
