"""``SQLiteStore``: the engram Store protocol over one SQLite file (FTS5) and a side matrix.

Vector search is exact: numpy over the memory-mapped side matrix of unit vectors (``matrix.py``),
brought up to the read transaction's generation, so it never answers from stale vectors. Filters
are a rowid mask selected in SQL, applied before ranking, never to a truncated candidate list.
Keyword search is FTS5 ranked by ``bm25()``; the score is ``-bm25``, so higher is better and
always positive.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import wait
from typing import Any, ClassVar

import numpy as np
import pluggy

from engram import (
    Candidates,
    Chunk,
    ClosingStore,
    Document,
    Filter,
    Hit,
    IndexIdentity,
    Keys,
    Scores,
    Stamp,
    StoreCapability,
    StoreError,
    check_finite,
)
from engram_sqlite import identity as ident
from engram_sqlite.connection import Database
from engram_sqlite.driver import DriverInfo
from engram_sqlite.filters import compile_filter
from engram_sqlite.fts import match_expression
from engram_sqlite.matrix import APPEND_AT, SideMatrix
from engram_sqlite.migrations import (
    LATEST,
    bump_generation,
    drop_everything,
    migrate,
    schema_version,
)
from engram_sqlite.options import SQLiteOptions
from engram_sqlite.ranking import (
    NOTHING,
    VectorTop,
    both_in_one_read,
    candidates_of,
    keyword_ceiling,
    keyword_ranking,
    ranked_rows,
    vector_top,
    with_cosines,
)
from engram_sqlite.records import (
    CHUNK_COLUMNS,
    CHUNKS,
    PRUNE_DOCUMENT,
    PUT_DOCUMENT,
    document_row,
    id_list,
    stamps_statement,
    to_chunk,
    to_document,
)
from engram_sqlite.search_rows import (
    SearchMeta,
    chunks_by_rowid,
    ids_by_rowid,
)
from engram_sqlite.stampcache import StampCache
from engram_sqlite.vector_changes import start_write
from engram_sqlite.vectors import unit_query
from engram_sqlite.writes import latest_by_id, metadata_for, replace_chunks, write_chunks


class SQLiteStore(ClosingStore):
    """Chunks, documents and the index identity in one SQLite file (WAL, one writer at a time)."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset(
        {"vector", "keyword", "filter", "persistent"}
    )

    def __init__(
        self,
        options: SQLiteOptions | None = None,
        *,
        plugin_manager: pluggy.PluginManager | None = None,
    ) -> None:
        self.options = options if options is not None else SQLiteOptions()
        # The registry binds the manager it was built from; built by hand, no hooks unless given.
        self._db = Database(self.options, plugin_manager)
        self.created = self._db.created  # the file was made by this open (``Memory.open``)
        self._matrix = SideMatrix(self.options.vectors_path())
        self._meta = SearchMeta(lambda: self._db.writes)
        self._stamps = StampCache(self.options.stamps_path())
        self._behind = False  # writes this store made that the side file does not hold yet
        try:
            with self._db.read() as conn:
                current = schema_version(conn)
            if current != LATEST:
                with self._db.write() as conn:
                    migrate(conn, self._db.where)
        except BaseException:
            self._db.close()
            raise

    # -- plumbing -----------------------------------------------------------------------------

    def check_integrity(self) -> None:
        """Raise ``IndexDamaged`` when SQLite's ``quick_check`` finds the file broken below
        the pages a command reads (what ``engram.stores.recovery`` asks before it heals a store)."""
        self._db.check_integrity()

    @property
    def connection(self) -> sqlite3.Connection:
        """The DB-API connection, for plugins and diagnostics; do not write outside the API."""
        return self._db.conn

    @property
    def driver(self) -> DriverInfo:
        """Which SQLite build the store runs on, and why (see ``engram_sqlite.diagnose``)."""
        return self._db.info

    def diagnostics(self) -> dict[str, Any]:
        """What ``engram doctor`` shows for this store: driver, why, SQLite/sqlite-vec versions."""
        return {"path": str(self.options.path), "schema_version": LATEST, **self.driver.as_dict()}

    def close(self) -> None:
        if self._behind and not self._db.closed:
            with contextlib.suppress(StoreError):  # a cache: the next search catches up
                self._persist(at_least=1)
        self._stamps.flush()
        self._matrix.forget()
        self._db.close()

    # -- identity -----------------------------------------------------------------------------

    def get_identity(self) -> IndexIdentity | None:
        with self._db.statement() as conn:
            return self._meta(conn)[0]

    def set_identity(self, identity: IndexIdentity) -> None:
        with self._db.write() as conn:
            ident.record(conn, identity)

    # -- chunks -------------------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        chunks = latest_by_id(chunks)
        if not chunks:
            return
        metadata = metadata_for(chunks)
        with self._db.write() as conn:
            generation = bump_generation(conn)
            write_chunks(conn, chunks, metadata, ident.load(conn), generation)
        self._persist()

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        ids = list(ids)
        if not ids:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS} FROM {CHUNKS} "
                "WHERE c.id IN (SELECT value FROM json_each(?))",
                (id_list(ids),),
            ).fetchall()
        found = {row[1]: to_chunk(row) for row in rows}
        return [found[i] for i in ids if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        ids = list(ids)
        if not ids:
            return
        with self._db.write() as conn:
            bump_generation(conn)
            conn.execute(
                "DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (id_list(ids),)
            )
        self._persist()

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        document_ids = list(document_ids)
        if not document_ids:
            return
        param = (id_list(document_ids),)
        with self._db.write() as conn:
            bump_generation(conn)
            before = self._stamps.before_write(conn)
            conn.execute(
                "DELETE FROM chunks WHERE document_id IN (SELECT value FROM json_each(?))", param
            )
            conn.execute(
                "DELETE FROM documents WHERE id IN (SELECT value FROM json_each(?))", param
            )
            self._stamps.written(conn, before, document_ids)
        self._persist()

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None:
        """Every chunk of ``document_id`` not in ``keep`` goes (by the indexed column)."""
        with self._db.write() as conn:
            bump_generation(conn)
            conn.execute(PRUNE_DOCUMENT, (document_id, id_list(list(keep))))
        self._persist()

    def replace_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """The document's chunks become ``chunks`` and its record ``document`` in ONE
        transaction (only what differs is written: ``writes.replace_chunks``). Whether the side
        file takes an append is asked inside it (``SideMatrix.current``): a small edit opens
        no read transaction after its commit."""
        chunks = latest_by_id(chunks)
        metadata, row = metadata_for(chunks), document_row(document)
        with self._db.write() as conn:
            start = start_write(conn)
            before = self._stamps.before_write(conn, start.meta)
            identity, state = start.identity, start.state
            replace_chunks(conn, document.id, chunks, metadata, identity, state.generation)
            conn.execute(PUT_DOCUMENT, row)
            self._stamps.written(conn, before, [document.id])
            dimension = None if identity is None else identity.dimension
            current = (
                None if dimension is None else self._matrix.current(conn, dimension, state=state)
            )
        if current is None:
            self._persist()  # an append (or no identity: nothing to keep)
        else:
            self._behind = not current

    def delete_where(self, filter: Filter) -> None:
        where, params = compile_filter(filter)
        with self._db.write() as conn:
            bump_generation(conn)
            conn.execute(
                f"DELETE FROM chunks WHERE rowid IN (SELECT c.rowid FROM chunks c WHERE {where})",
                params,
            )
        self._persist()

    def count(self, filter: Filter | None = None) -> int:
        where, params = compile_filter(filter)
        with self._db.read() as conn:
            row = conn.execute(f"SELECT count(*) FROM chunks c WHERE {where}", params).fetchone()
        return int(row[0])

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        if batch_size < 1:
            raise StoreError(f"batch_size must be at least 1 (got {batch_size})")
        after = 0
        while True:
            with self._db.read() as conn:
                rows = conn.execute(
                    f"SELECT {CHUNK_COLUMNS} FROM {CHUNKS} WHERE c.rowid > ? "
                    "ORDER BY c.rowid LIMIT ?",
                    (after, batch_size),
                ).fetchall()
            if not rows:
                return
            after = rows[-1][0]
            yield [to_chunk(row) for row in rows]

    # -- documents ----------------------------------------------------------------------------

    def put_document(self, document: Document) -> None:
        with self._db.write() as conn:
            before = self._stamps.before_write(conn)
            conn.execute(PUT_DOCUMENT, document_row(document))
            self._stamps.written(conn, before, [document.id])

    def list_documents(self) -> dict[str, Document]:
        with self._db.read() as conn:
            rows = conn.execute("SELECT id, hash, metadata FROM documents ORDER BY id").fetchall()
        return {row[0]: to_document(row) for row in rows}

    def document_stamps(
        self, sources: Sequence[str], roots: Sequence[str], settled_s: float
    ) -> dict[str, Stamp]:
        """Read through ``stampcache.StampCache``: current by the documents token (one
        statement, no transaction: every index run asks), or SQL in a read transaction."""
        query, params = stamps_statement(sources, roots, settled_s)
        with self._db.statement() as conn:
            cached = self._stamps.current(conn, query, params)
        if cached is not None:
            return cached
        with self._db.read() as conn:
            return self._stamps.read(conn, query, params)

    def get_documents(self, ids: Sequence[str]) -> dict[str, Document]:
        """One statement, one snapshot by itself: no BEGIN and COMMIT around it."""
        with self._db.statement() as conn:
            rows = conn.execute(
                "SELECT id, hash, metadata FROM documents "
                "WHERE id IN (SELECT value FROM json_each(?)) ORDER BY id",
                (id_list(ids),),
            ).fetchall()
        return {row[0]: to_document(row) for row in rows}

    # -- search -------------------------------------------------------------------------------

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """Exact cosine top-k. Zero vectors (stored or query) have similarity 0 with everything.
        The hits' chunks come without their vectors (``get`` has them): decoding 384 floats a
        hit cost more than the scan of a 10K-chunk store."""
        _check_k(k)
        given = check_finite(vector, "the query vector")
        where, params = compile_filter(filter)
        if k == 0:
            return []
        with self._db.read() as conn:
            top = vector_top(conn, self._meta, self._matrix, given, k, where, params)
            rowids, scores = top.scored
            ranked: list[int] = rowids.tolist()
            chunks = chunks_by_rowid(conn, ranked, vectors=False)
        return [
            Hit(chunk=chunks[rowid], score=score, vector_score=score)
            for rowid, score in zip(ranked, scores.tolist(), strict=True)
            if rowid in chunks
        ]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """FTS5 + bm25 over the chunk text; every word of ``query`` is a quoted FTS5 phrase. The
        hits' chunks carry their vectors: fusing hit lists (``engram.search.fuse_weighted``)
        gives a keyword-only hit its cosine from them."""
        _check_k(k)
        ranked = keyword_ranking(query, k, filter)
        if ranked is None:
            return []
        with self._db.statement() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS}, top.score FROM ({ranked[0]}) AS top "
                "JOIN chunks c ON c.rowid = top.rowid LEFT JOIN vectors v ON v.rowid = c.rowid "
                "ORDER BY top.score DESC, c.rowid",
                ranked[1],
            ).fetchall()
        return [
            Hit(chunk=to_chunk(row), score=float(row[7]), keyword_score=float(row[7]))
            for row in rows
        ]

    def keyword_ceiling(self, query: str) -> float | None:
        """The query's keyword ceiling (``engram.KeywordCeiling``; ``ranking.keyword_ceiling``)."""
        if match_expression(query) is None:
            return None
        with self._db.read() as conn:
            return keyword_ceiling(conn, query)

    # -- candidates (engram.protocols.CandidateSearch) ---------------------------------------

    def vector_candidates(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> Candidates:
        """``vector_search`` as rowids and cosines: no chunk is built, and the ids are read only
        if fusion asks (``Candidates.by_key``)."""
        return self._vector_side(vector, k, filter)[0]

    def keyword_candidates(self, query: str, k: int, filter: Filter | None = None) -> Candidates:
        """``keyword_search`` as rowids and BM25 relevances, built as ``vector_candidates``."""
        _check_k(k)
        ranked = keyword_ranking(query, k, filter)
        if ranked is None:
            return Candidates.empty()
        with self._db.statement() as conn:
            return candidates_of(ranked_rows(conn, ranked), self._names)

    def candidate_pair(
        self, vector: Sequence[float], query: str, k: int, filter: Filter | None = None
    ) -> tuple[Candidates, Candidates]:
        """``vector_candidates`` and ``keyword_candidates`` at once (``engram.search.candidates.
        CandidatePair``), the same answers as the two calls. From ``parallel_hybrid_from``
        vectors the FTS5 query runs on the second connection's thread while numpy scans here
        (both release the GIL); below it, or in memory, both run in one read transaction
        (``ranking.both_in_one_read``). The keyword candidates carry their cosines
        (``Candidates.cosines``) from the matrix the vector half scanned: fusion needs them, and
        ``key_scores`` would cost another transaction.
        """
        _check_k(k)
        ranked = keyword_ranking(query, k, filter)
        if ranked is None:  # no words to match
            return self.vector_candidates(vector, k, filter), Candidates.empty()
        together = self._matrix.rows() >= self.options.parallel_hybrid_from
        future = self._db.read_aside(lambda c: ranked_rows(c, ranked)) if together else None
        if future is None:
            given = check_finite(vector, "the query vector")
            where, params = compile_filter(filter)
            with self._db.read() as conn:
                return both_in_one_read(
                    conn, self._meta, self._matrix, given, ranked, k, where, params, self._names
                )
        try:
            vector_side, top = self._vector_side(vector, k, filter)
        except BaseException:
            wait([future])  # never leave the keyword half running past the call
            raise
        return vector_side, with_cosines(candidates_of(future.result(), self._names), top)

    def key_scores(self, keys: Keys, vector: Sequence[float]) -> Scores:
        """Cosine of each rowid's vector with ``vector``: one gather and one product on the side
        matrix; NaN for a row without a vector."""
        given = check_finite(vector, "the query vector")
        rowids = np.asarray(keys, dtype=np.int64)
        with self._db.read() as conn:
            identity, state = self._meta(conn)
            if identity is None or not len(rowids):
                return np.full(len(rowids), np.nan)
            query = unit_query(given, identity)
            view = self._matrix.view(conn, identity.dimension, state)
            return view.scores_for(rowids, query)

    def chunks_for(self, keys: Keys, *, vectors: bool = False) -> list[Chunk]:
        """The chunks of these rowids in their order (vectors decoded only if asked)."""
        rowids: list[int] = np.asarray(keys, dtype=np.int64).tolist()
        if not rowids:
            return []
        with self._db.statement() as conn:
            found = chunks_by_rowid(conn, rowids, vectors=vectors)
        return [found[r] for r in rowids if r in found]

    def _vector_side(
        self, vector: Sequence[float], k: int, filter: Filter | None
    ) -> tuple[Candidates, VectorTop]:
        """The vector candidates, with the ranking they come from, for a caller that gathers
        more cosines from its scan."""
        _check_k(k)
        given = check_finite(vector, "the query vector")
        where, params = compile_filter(filter)
        if k == 0:
            return Candidates.empty(), VectorTop(NOTHING)
        with self._db.read() as conn:
            top = vector_top(conn, self._meta, self._matrix, given, k, where, params)
        return candidates_of(top.scored, self._names), top

    def _names(self, keys: Keys) -> list[str]:
        """The chunk ids of rowids ("" for one gone since), for candidates read without."""
        rowids = [int(k) for k in keys.tolist()]
        with self._db.statement() as conn:
            found = ids_by_rowid(conn, rowids)
        return [found.get(rowid, "") for rowid in rowids]

    def _persist(self, at_least: int = APPEND_AT) -> None:
        """Append what the writes changed to the side file once ``at_least`` rows did, so no
        search has to read many rows from SQLite; ``close`` appends the rest."""
        with self._db.read() as conn:
            identity = ident.load(conn)
            if identity is not None:
                self._behind = not self._matrix.persist(conn, identity.dimension, at_least=at_least)

    # -- lifecycle ----------------------------------------------------------------------------

    def reset(self) -> None:
        with self._db.write() as conn:
            drop_everything(conn)
            migrate(conn, self._db.where)
        self._matrix.forget()
        self._stamps.forget()
        self._persist()

    def optimize(self) -> dict[str, Any]:
        """Write a fresh side matrix, forget tombstones older than it, and merge the FTS index
        into one b-tree (``engram optimize``; worth it after a large import)."""
        began = time.perf_counter()
        with self._db.read() as conn:
            identity = ident.load(conn)
            snapshot = None if identity is None else self._matrix.compact(conn, identity.dimension)
        with self._db.write() as conn:
            pruned = 0
            if snapshot is not None:
                pruned = conn.execute(
                    "DELETE FROM vector_tombstones WHERE generation <= ?", (snapshot.generation,)
                ).rowcount
                conn.execute(
                    "UPDATE meta SET value = max(CAST(value AS INTEGER), ?) "
                    "WHERE key = 'tombstone_floor'",
                    (snapshot.generation,),
                )
            conn.execute("INSERT INTO chunks_fts(chunks_fts) VALUES ('optimize')")
        return {
            "vectors": 0 if snapshot is None else len(snapshot),
            "generation": None if snapshot is None else snapshot.generation,
            "tombstones_forgotten": pruned,
            "seconds": round(time.perf_counter() - began, 3),
        }


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more (got {k})")
