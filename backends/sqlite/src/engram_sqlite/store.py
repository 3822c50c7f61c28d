"""``SQLiteStore``: the engram Store protocol over one SQLite file (sqlite-vec + FTS5).

Vector search is exact (vec0 KNN is a brute-force scan) and filters are applied inside the scan
(``rowid IN (filtered chunks)``), never to a truncated candidate list. Keyword search is FTS5
ranked by ``bm25()``; the score is ``-bm25``, so higher is better and always positive.
"""

from __future__ import annotations

import functools
import json
import sqlite3
from collections.abc import Iterator, Sequence
from types import TracebackType
from typing import Any, ClassVar

import pluggy

from engram.errors import StoreError
from engram.filters import Filter
from engram.models import Chunk, Document, Hit, IndexIdentity
from engram.protocols import StoreCapability
from engram.vectors import check_finite
from engram_sqlite import identity as ident
from engram_sqlite.connection import Database
from engram_sqlite.driver import DriverInfo
from engram_sqlite.filters import compile_filter
from engram_sqlite.fts import match_expression
from engram_sqlite.migrations import LATEST, drop_everything, migrate, schema_version
from engram_sqlite.options import SQLiteOptions
from engram_sqlite.records import (
    CHUNK_COLUMNS,
    CHUNKS,
    id_list,
    metadata_json,
    to_chunk,
    to_document,
)
from engram_sqlite.vectors import Prepared, prepare

KNN_MAX_K = 4096  # sqlite-vec's limit for k in a KNN query; above it we scan with ORDER BY
# chunks.vector_state: no vector; in the vec0 index; a zero vector (kept, never indexed; the
# partial index chunks_zero_vector and _zero_similarity spell ZERO as the literal 2).
NO_VECTOR, INDEXED, ZERO = 0, 1, 2

_UPSERT = """
INSERT INTO chunks(id, document_id, document_hash, metadata, vector_state, text)
VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
    document_id = excluded.document_id, document_hash = excluded.document_hash,
    metadata = excluded.metadata, vector_state = excluded.vector_state, text = excluded.text
RETURNING rowid
"""


@functools.cache
def default_plugin_manager() -> pluggy.PluginManager:
    """Core's plugin manager, built once, for stores made by the registry (options only)."""
    from engram.plugins import get_plugin_manager

    return get_plugin_manager()


class SQLiteStore:
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
        pm = plugin_manager if plugin_manager is not None else default_plugin_manager()
        self._db = Database(self.options, pm)
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
        self._db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- identity -----------------------------------------------------------------------------

    def get_identity(self) -> IndexIdentity | None:
        with self._db.read() as conn:
            return ident.load(conn)

    def set_identity(self, identity: IndexIdentity) -> None:
        with self._db.write() as conn:
            ident.record(conn, identity)

    # -- chunks -------------------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        chunks = list(chunks)
        if not chunks:
            return
        metadata = [metadata_json(c.metadata, f"chunk {c.id!r}") for c in chunks]
        with self._db.write() as conn:
            identity = ident.load(conn)
            vectors = [_prepare(c, identity) for c in chunks]
            for chunk, meta, vector in zip(chunks, metadata, vectors, strict=True):
                self._write_chunk(conn, chunk, meta, vector, has_vec_table=identity is not None)

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
            conn.execute(
                "DELETE FROM chunks WHERE id IN (SELECT value FROM json_each(?))", (id_list(ids),)
            )

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        document_ids = list(document_ids)
        if not document_ids:
            return
        param = (id_list(document_ids),)
        with self._db.write() as conn:
            conn.execute(
                "DELETE FROM chunks WHERE document_id IN (SELECT value FROM json_each(?))", param
            )
            conn.execute(
                "DELETE FROM documents WHERE id IN (SELECT value FROM json_each(?))", param
            )

    def delete_where(self, filter: Filter) -> None:
        where, params = compile_filter(filter)
        with self._db.write() as conn:
            conn.execute(
                f"DELETE FROM chunks WHERE rowid IN (SELECT c.rowid FROM chunks c WHERE {where})",
                params,
            )

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
        meta = metadata_json(document.metadata, f"document {document.id!r}")
        with self._db.write() as conn:
            conn.execute(
                "INSERT INTO documents(id, hash, metadata) VALUES (?, ?, ?) "
                "ON CONFLICT(id) DO UPDATE SET hash = excluded.hash, metadata = excluded.metadata",
                (document.id, document.hash, meta),
            )

    def list_documents(self) -> dict[str, Document]:
        with self._db.read() as conn:
            rows = conn.execute("SELECT id, hash, metadata FROM documents ORDER BY id").fetchall()
        return {row[0]: to_document(row) for row in rows}

    # -- search -------------------------------------------------------------------------------

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """Exact cosine top-k. Zero vectors (stored or query) have similarity 0 with everything."""
        _check_k(k)
        check_finite(vector, "the query vector")
        where, params = compile_filter(filter)
        if k == 0:
            return []
        with self._db.read() as conn:
            identity = ident.load(conn)
            if identity is None:
                return []
            query = prepare(vector, identity, "the query vector")
            if query.unit is None:
                scored = _zero_similarity(conn, True, where, params, k)
            else:
                scored = _nearest(conn, query.unit, where, params, k)
                scored += _zero_similarity(conn, False, where, params, k)
            scored.sort(key=lambda pair: (-pair[1], pair[0]))
            scored = scored[:k]
            chunks = _chunks_by_rowid(conn, [rowid for rowid, _ in scored])
        return [
            Hit(chunk=chunks[rowid], score=score, vector_score=score)
            for rowid, score in scored
            if rowid in chunks
        ]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """FTS5 + bm25 over the chunk text; every word of ``query`` is a quoted FTS5 phrase."""
        _check_k(k)
        where, params = compile_filter(filter)
        expression = match_expression(query)
        if expression is None or k == 0:
            return []
        with self._db.read() as conn:
            rows = conn.execute(
                f"SELECT {CHUNK_COLUMNS}, -bm25(chunks_fts) AS score "
                "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
                "LEFT JOIN vectors v ON v.rowid = c.rowid "
                f"WHERE chunks_fts MATCH ? AND {where} "
                "ORDER BY score DESC, c.rowid LIMIT ?",
                [expression, *params, k],
            ).fetchall()
        return [
            Hit(chunk=to_chunk(row), score=float(row[7]), keyword_score=float(row[7]))
            for row in rows
        ]

    # -- lifecycle ----------------------------------------------------------------------------

    def reset(self) -> None:
        with self._db.write() as conn:
            drop_everything(conn)
            migrate(conn, self._db.where)

    # -- internals ----------------------------------------------------------------------------

    @staticmethod
    def _write_chunk(
        conn: sqlite3.Connection,
        chunk: Chunk,
        metadata: str,
        vector: Prepared | None,
        *,
        has_vec_table: bool,
    ) -> None:
        state = _vector_state(vector)
        (rowid,) = conn.execute(
            _UPSERT,
            (chunk.id, chunk.document_id, chunk.document_hash, metadata, state, chunk.text),
        ).fetchall()[0]
        if vector is None:
            conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
        else:
            conn.execute(
                "INSERT INTO vectors(rowid, vector) VALUES (?, ?) "
                "ON CONFLICT(rowid) DO UPDATE SET vector = excluded.vector",
                (rowid, vector.stored),
            )
        if has_vec_table:
            conn.execute(f"DELETE FROM {ident.VEC_TABLE} WHERE rowid = ?", (rowid,))
        if vector is not None and vector.unit is not None:
            conn.execute(
                f"INSERT INTO {ident.VEC_TABLE}(rowid, embedding) VALUES (?, ?)",
                (rowid, vector.unit),
            )


def _prepare(chunk: Chunk, identity: IndexIdentity | None) -> Prepared | None:
    if chunk.vector is None:
        return None
    if identity is None:
        raise StoreError(
            f"chunk {chunk.id!r} has a vector but the store has no index identity yet; call "
            "set_identity(IndexIdentity(...)) before upserting vectors (or upsert with vector=None "
            "for keyword-only chunks)"
        )
    return prepare(chunk.vector, identity, f"the vector of chunk {chunk.id!r}")


def _vector_state(vector: Prepared | None) -> int:
    if vector is None:
        return NO_VECTOR
    return ZERO if vector.unit is None else INDEXED


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more (got {k})")


def _nearest(
    conn: sqlite3.Connection, unit: bytes, where: str, params: list[Any], k: int
) -> list[tuple[int, float]]:
    """(rowid, cosine) of the k nearest indexed vectors among the chunks ``where`` selects."""
    restrict = "" if where == "1" else f" AND rowid IN (SELECT c.rowid FROM chunks c WHERE {where})"
    if k <= KNN_MAX_K:
        sql = (
            f"SELECT rowid, distance FROM {ident.VEC_TABLE} "
            f"WHERE embedding MATCH ? AND k = ?{restrict}"
        )
        args: list[Any] = [unit, k, *params]
    else:
        sql = (
            f"SELECT rowid, vec_distance_cosine(embedding, ?) AS distance "
            f"FROM {ident.VEC_TABLE} WHERE 1{restrict} ORDER BY distance, rowid LIMIT ?"
        )
        args = [unit, *params, k]
    rows = conn.execute(sql, args).fetchall()
    return [(int(rowid), min(1.0, max(-1.0, 1.0 - float(d)))) for rowid, d in rows]


def _zero_similarity(
    conn: sqlite3.Connection, every_vector: bool, where: str, params: list[Any], k: int
) -> list[tuple[int, float]]:
    """Up to k chunks whose similarity is 0 by definition: those with a zero vector, or, for a
    zero query, every chunk with a vector."""
    states = "c.vector_state != 0" if every_vector else "c.vector_state = 2"
    rows = conn.execute(
        f"SELECT c.rowid FROM chunks c WHERE {states} AND {where} ORDER BY c.rowid LIMIT ?",
        [*params, k],
    ).fetchall()
    return [(int(row[0]), 0.0) for row in rows]


def _chunks_by_rowid(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, Chunk]:
    if not rowids:
        return {}
    rows = conn.execute(
        f"SELECT {CHUNK_COLUMNS} FROM {CHUNKS} WHERE c.rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    ).fetchall()
    return {int(row[0]): to_chunk(row) for row in rows}
