"""``PostgresStore``: the engram Store protocol over PostgreSQL + pgvector.

One namespace's chunks and document records live in their own two tables (``schema.py`` says
why); every write is one transaction, so a client killed mid-index leaves whole documents or
none, and the next index repairs the rest. Vector search is exact (a scan ordered by cosine)
until the namespace has more than ``hnsw_threshold`` chunks; past it an HNSW index
(``vector_cosine_ops``) is built and searched with ``hnsw.ef_search`` and pgvector 0.8's
``hnsw.iterative_scan = relaxed_order``, so a filtered search still finds k hits, re-sorted
exactly. Keyword search is PostgreSQL full-text over tsvectors written from engram's tokenizer
(``words.py``), ranked by ``ts_rank``.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, ClassVar

import numpy as np
from psycopg import sql

from engram import (
    Chunk,
    ClosingStore,
    Document,
    Filter,
    Hit,
    IndexIdentity,
    StoreCapability,
    StoreError,
    check_finite,
    check_identity,
    check_vector,
)
from engram_postgres.connection import Contention, Database
from engram_postgres.filters import compile_filter
from engram_postgres.hnsw import Conn, HnswUpkeep
from engram_postgres.jsontext import enc
from engram_postgres.options import PostgresOptions
from engram_postgres.rows import (
    CHUNK_COLUMNS,
    EXTRA,
    chunk_params,
    document_params,
    to_chunk,
    to_document,
    to_identity,
    unit_and_norm,
)
from engram_postgres.schema import LATEST, Tables, namespace_number
from engram_postgres.staging import MERGE_STAGED, stage
from engram_postgres.words import tsquery_text

WRITE_ATTEMPTS = 5


class PostgresStore(HnswUpkeep, ClosingStore):
    """Chunks, documents and the index identity of one namespace in a PostgreSQL database."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset(
        {"vector", "keyword", "filter", "persistent", "concurrent-writers"}
    )
    shared = True

    def __init__(self, options: PostgresOptions | None = None) -> None:
        self.options = options if options is not None else PostgresOptions()
        self._db = Database(self.options)
        self._closed = False
        try:
            with self._db.errors("opening the namespace"), self._db.pool.connection() as conn:
                conn.autocommit = True
                number = namespace_number(conn, self.options.pg_schema, self.options.namespace)
                conn.autocommit = False
        except BaseException:
            self._db.close()
            raise
        self.tables = Tables(self.options.pg_schema, number)
        self._identity: IndexIdentity | None = None
        self._hnsw = False

    @property
    def where(self) -> str:
        """The store in words (no password): server, schema and namespace."""
        return (
            f"{self._db.where}, schema {self.options.pg_schema!r}, "
            f"namespace {self.options.namespace!r}"
        )

    def _sql(self, text: str, **parts: sql.Composable) -> sql.Composed:
        t = self.tables
        return sql.SQL(text).format(
            chunks=t.chunks, documents=t.documents, namespaces=t.namespaces, **parts
        )

    # -- plumbing -----------------------------------------------------------------------------

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._db.close()

    def diagnostics(self) -> dict[str, Any]:
        """What ``engram doctor`` shows: the server (no password), versions, namespace, size."""
        info: dict[str, Any] = {
            "server": self._db.where,
            "postgresql": self._db.server_version,
            "pgvector": self._db.pgvector_version,
            "schema": self.options.pg_schema,
            "schema_version": LATEST,
            "namespace": self.options.namespace,
            "tables": [self.tables.chunks.as_string(), self.tables.documents.as_string()],
            "hnsw_threshold": self.options.hnsw_threshold,
        }
        try:
            info["chunks"] = self.count()
            info["hnsw_index"] = self._has_hnsw()
        except StoreError as exc:
            info["error"] = str(exc)
        return info

    def optimize(self) -> dict[str, Any]:
        """VACUUM ANALYZE the namespace's tables; build the HNSW index once past the threshold
        (or drop it when the namespace has shrunk below it)."""
        with self._db.errors("optimizing"), self._db.pool.connection() as conn:
            conn.autocommit = True
            try:
                for table in (self.tables.chunks, self.tables.documents):
                    conn.execute(sql.SQL("VACUUM ANALYZE {}").format(table))
            finally:
                conn.autocommit = False
        rows = self.count()
        built = self._build_hnsw(force_check=True)
        if rows < self.options.hnsw_threshold and not built and self._has_hnsw():
            with self._db.connection("dropping the HNSW index") as conn:
                conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(self.tables.hnsw))
            self._hnsw = False
        return {"chunks": rows, "hnsw_index": self._has_hnsw(), "vacuumed": True}

    # -- identity -----------------------------------------------------------------------------

    def get_identity(self) -> IndexIdentity | None:
        with self._db.connection("reading the identity") as conn:
            self._identity = self._read_identity(conn)
        return self._identity

    def _read_identity(self, conn: Conn, lock: str = "") -> IndexIdentity | None:
        row = conn.execute(
            self._sql("SELECT identity FROM {namespaces} WHERE id = %s" + lock),
            (self.tables.number,),
        ).fetchone()
        if row is None:
            raise StoreError(
                f"namespace {self.options.namespace!r} vanished from {self._db.where}; "
                f"open the store again to recreate it"
            )
        return to_identity(row[0])

    def set_identity(self, identity: IndexIdentity) -> None:
        holder = f"the namespace {self.options.namespace!r} on {self._db.where}"
        with self._db.connection("recording the identity") as conn:
            current = self._read_identity(conn, " FOR UPDATE")
            if check_identity(current, identity, holder=holder):
                conn.execute(
                    self._sql(
                        "ALTER TABLE {chunks} ALTER COLUMN embedding TYPE {kind}",
                        kind=sql.SQL(f"vector({int(identity.dimension)})"),
                    )
                )
                # pgvector's type is stored EXTERNAL: a row with a chunk's text and tsvector
                # passes the 2 kB TOAST threshold and its vector moves out of line, so every
                # exact scan reads the TOAST table too. MAIN keeps it in the row (out of line
                # only as a last resort): exact scans of 10,000 bench chunks went from 149 ms
                # to 56 ms p50 in the same run (README, "Search").
                conn.execute(
                    self._sql("ALTER TABLE {chunks} ALTER COLUMN embedding SET STORAGE MAIN")
                )
                conn.execute(
                    self._sql("UPDATE {namespaces} SET identity = %s::jsonb WHERE id = %s"),
                    (identity.model_dump_json(), self.tables.number),
                )
        self._identity = identity

    def _search_identity(self) -> IndexIdentity | None:
        if self._identity is None:
            return self.get_identity()
        return self._identity

    # -- chunks -------------------------------------------------------------------------------

    def _prepared(
        self, chunks: Sequence[Chunk], identity: IndexIdentity | None
    ) -> list[tuple[Any, ...]]:
        """Checked rows, sorted by id (two writers lock rows in the same order: no deadlock)."""
        latest = sorted({c.id: c for c in chunks}.values(), key=lambda c: c.id)
        rows: list[tuple[Any, ...]] = []
        for c in latest:
            vector = None
            if c.vector is not None:
                if identity is None:
                    raise StoreError(
                        f"chunk {c.id!r} has a vector but {self.where} has no index identity "
                        f"yet; call set_identity(...) before storing vectors"
                    )
                vector = check_vector(c.vector, identity, f"the vector of chunk {c.id!r}")
            rows.append(chunk_params(c, vector))
        return rows

    def _write_chunks(self, conn: Conn, rows: list[tuple[Any, ...]]) -> None:
        """Write ``rows`` (sorted by id) in the caller's transaction, through the staging table
        (``engram_postgres.staging``): upsert semantics, row locks in id order, all or nothing."""
        if rows:
            stage(conn, rows)
            conn.execute(self._sql(MERGE_STAGED))

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        if not chunks:
            return

        def work(conn: Conn) -> None:
            identity = self._read_identity(conn, " FOR SHARE")
            self._write_chunks(conn, self._prepared(chunks, identity))

        self._write("writing chunks", work)
        self._build_hnsw()

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        ids = list(ids)
        if not ids:
            return []
        with self._db.connection("reading chunks") as conn:
            rows = conn.execute(
                self._sql(f"SELECT {CHUNK_COLUMNS} FROM {{chunks}} c WHERE c.id = ANY(%s::text[])"),
                ([enc(i) for i in ids],),
                binary=True,
            ).fetchall()
        found = {c.id: c for c in map(to_chunk, rows)}
        return [found[i] for i in ids if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        ids = sorted({enc(i) for i in ids})
        if not ids:
            return
        self._write(
            "deleting chunks",
            lambda conn: self._delete_chunks(conn, sql.SQL("c.id = ANY(%s::text[])"), [ids]),
        )

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        document_ids = sorted({enc(i) for i in document_ids})
        if not document_ids:
            return

        def work(conn: Conn) -> None:
            where = sql.SQL("c.document_id = ANY(%s::text[])")
            self._delete_chunks(conn, where, [document_ids])
            conn.execute(
                self._sql("DELETE FROM {documents} WHERE id = ANY(%s::text[])"), (document_ids,)
            )

        self._write("deleting documents", work)

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None:
        """Every chunk of ``document_id`` not in ``keep`` goes (found by its document column)."""
        kept = [enc(k) for k in keep]
        self._write("pruning a document", lambda conn: self._prune(conn, document_id, kept))

    def _prune(self, conn: Conn, document_id: str, keep: list[str]) -> None:
        where = sql.SQL("c.document_id = %s AND NOT (c.id = ANY(%s::text[]))")
        self._delete_chunks(conn, where, [enc(document_id), keep])

    def _delete_chunks(self, conn: Conn, where: sql.Composable, params: list[Any]) -> None:
        """Delete the chunks ``where`` selects, locking them in id order first: writers that
        lock rows in one order cannot deadlock (upserts write sorted by id too)."""
        conn.execute(
            self._sql(
                "DELETE FROM {chunks} WHERE id IN (SELECT c.id FROM {chunks} c WHERE {where} "
                "ORDER BY c.id FOR UPDATE)",
                where=where,
            ),
            params,
        )

    def _write(self, action: str, work: Callable[[Conn], None]) -> None:
        """``work`` in one transaction, run again (up to ``WRITE_ATTEMPTS`` times) when the
        server cancels it for a deadlock or a serialization failure: it then changed nothing."""
        for attempt in range(1, WRITE_ATTEMPTS + 1):
            try:
                with self._db.connection(action) as conn:
                    work(conn)
                return
            except Contention:
                if attempt == WRITE_ATTEMPTS:
                    raise
                time.sleep(0.05 * attempt)

    def replace_document(self, document: Document, chunks: Sequence[Chunk]) -> None:
        """The document's chunks become ``chunks`` and its record ``document``, in ONE
        transaction: a crash leaves the old document whole or the new one."""

        def work(conn: Conn) -> None:
            identity = self._read_identity(conn, " FOR SHARE")
            rows = self._prepared(chunks, identity)
            self._write_chunks(conn, rows)
            self._prune(conn, document.id, [r[0] for r in rows])
            self._put_document(conn, document)

        self._write("replacing a document", work)
        self._build_hnsw()

    def delete_where(self, filter: Filter) -> None:
        where, params = compile_filter(filter, self.options.pg_schema)
        self._write(
            "deleting chunks by filter", lambda conn: self._delete_chunks(conn, where, params)
        )

    def count(self, filter: Filter | None = None) -> int:
        where, params = compile_filter(filter, self.options.pg_schema)
        with self._db.connection("counting chunks") as conn:
            row = conn.execute(
                self._sql("SELECT count(*) FROM {chunks} c WHERE {where}", where=where), params
            ).fetchone()
        return int(row[0]) if row else 0

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        if batch_size < 1:
            raise StoreError(f"batch_size must be at least 1 (got {batch_size})")
        after = 0
        statement = self._sql(
            f"SELECT {CHUNK_COLUMNS}, c.seq FROM {{chunks}} c "
            "WHERE c.seq > %s ORDER BY c.seq LIMIT %s"
        )
        while True:
            with self._db.connection("reading chunks") as conn:
                rows = conn.execute(statement, (after, batch_size), binary=True).fetchall()
            if not rows:
                return
            after = int(rows[-1][EXTRA])
            yield [to_chunk(row) for row in rows]

    # -- documents ----------------------------------------------------------------------------

    def _put_document(self, conn: Conn, document: Document) -> None:
        conn.execute(
            self._sql(
                "INSERT INTO {documents} (id, hash, metadata) VALUES (%s, %s, %s::jsonb) "
                "ON CONFLICT (id) DO UPDATE SET hash = EXCLUDED.hash, metadata = EXCLUDED.metadata"
            ),
            document_params(document),
        )

    def put_document(self, document: Document) -> None:
        self._write("writing a document record", lambda conn: self._put_document(conn, document))

    def list_documents(self) -> dict[str, Document]:
        with self._db.connection("listing documents") as conn:
            rows = conn.execute(
                self._sql("SELECT id, hash, metadata FROM {documents} ORDER BY id")
            ).fetchall()
        return {d.id: d for d in map(to_document, rows)}

    # -- search -------------------------------------------------------------------------------

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """Cosine top-k: exact below the threshold, HNSW (iterative scan) past it. Zero vectors
        have similarity 0 with everything, as in the reference store. Hits carry their vectors
        (core's candidate adapter scores fused hits from them)."""
        _check_k(k)
        identity = self._search_identity()
        if identity is None:  # nothing can hold a vector yet
            check_finite(vector, "the query vector")
            return []
        query = unit_and_norm(check_vector(vector, identity, "the query vector"))[0]
        where, params = compile_filter(filter, self.options.pg_schema)
        if k == 0:
            return []
        with self._db.connection("searching vectors") as conn:
            statement, values = self._vector_statement(conn, query, k, where, params)
            rows = conn.execute(statement, values, binary=True).fetchall()
            if len(rows) < k and self._hnsw:
                # A filter so rare that the iterative scan gave up (hnsw.max_scan_tuples): the
                # exact scan finds what there is.
                statement, values = self._vector_statement(
                    conn, query, k, where, params, exact=True
                )
                rows = conn.execute(statement, values, binary=True).fetchall()
        return [
            Hit(chunk=to_chunk(r), score=float(r[EXTRA]), vector_score=float(r[EXTRA]))
            for r in rows
        ]

    def vector_plan(self, vector: Sequence[float], k: int, filter: Filter | None = None) -> str:
        """PostgreSQL's plan for ``vector_search`` (``EXPLAIN``): tests and ``doctor`` use it to
        see whether the HNSW index answers."""
        identity = self._search_identity()
        if identity is None:
            return "no identity: nothing to search"
        query = unit_and_norm(check_vector(vector, identity, "the query vector"))[0]
        where, params = compile_filter(filter, self.options.pg_schema)
        with self._db.connection("explaining a vector search") as conn:
            statement, values = self._vector_statement(conn, query, max(k, 1), where, params)
            rows = conn.execute(sql.SQL("EXPLAIN ") + statement, values).fetchall()
        return "\n".join(str(r[0]) for r in rows)

    def _vector_statement(
        self,
        conn: Conn,
        query: np.ndarray[Any, Any],
        k: int,
        where: sql.Composable,
        params: list[Any],
        *,
        exact: bool = False,
    ) -> tuple[sql.Composed, list[Any]]:
        """The exact scan, or past the threshold the HNSW scan (its settings set for this
        transaction: sequential scans off, so the planner takes the index even where it
        guesses a scan is as cheap). ``k`` is an int of ours, written as a literal: with a
        bound LIMIT a prepared statement's generic plan guesses a large one."""
        score = "COALESCE(1 - NULLIF(d, 'NaN'), 0)"
        limit = sql.Literal(int(k))
        if not exact and self._has_hnsw(conn):
            conn.execute(
                "SELECT set_config('hnsw.ef_search', %s, true), "
                "set_config('enable_seqscan', 'off', true), "
                "set_config('hnsw.iterative_scan', 'relaxed_order', true)",
                (str(max(self.options.ef_search, k)),),
            )
            statement = self._sql(
                "WITH top AS MATERIALIZED (SELECT c.seq, c.embedding <=> %s AS d "
                "FROM {chunks} c WHERE {where} "
                "ORDER BY c.embedding <=> %s LIMIT {limit}) "
                f"SELECT {CHUNK_COLUMNS}, {score} AS score FROM top "
                "JOIN {chunks} c ON c.seq = top.seq ORDER BY top.d, c.seq",
                where=where,
                limit=limit,
            )
            return statement, [query, *params, query]
        if exact:
            conn.execute("SELECT set_config('enable_seqscan', 'on', true)")
        statement = self._sql(
            f"SELECT {CHUNK_COLUMNS}, {score} AS score FROM "
            "(SELECT c.*, c.embedding <=> %s AS d FROM {chunks} c "
            "WHERE c.embedding IS NOT NULL AND {where}) AS c "
            "ORDER BY score DESC, c.seq LIMIT {limit}",
            where=where,
            limit=limit,
        )
        return statement, [query, *params]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """Full-text search: any of the query's words matches, ranked by ``ts_rank`` (> 0). The
        hits carry their vectors, so fusion can give a keyword-only hit its cosine."""
        _check_k(k)
        terms = tsquery_text(query)
        where, params = compile_filter(filter, self.options.pg_schema)
        if terms is None or k == 0:
            return []
        statement = self._sql(
            f"SELECT {CHUNK_COLUMNS}, ts_rank(c.terms, q.q) AS score "
            "FROM {chunks} c, (SELECT %s::tsquery AS q) AS q "
            "WHERE c.terms @@ q.q AND {where} ORDER BY score DESC, c.seq LIMIT %s",
            where=where,
        )
        with self._db.connection("searching keywords") as conn:
            rows = conn.execute(statement, (terms, *params, k), binary=True).fetchall()
        return [
            Hit(chunk=to_chunk(r), score=float(r[EXTRA]), keyword_score=float(r[EXTRA]))
            for r in rows
        ]

    # -- reset --------------------------------------------------------------------------------

    def reset(self) -> None:
        """Every chunk, record, index and the identity of this namespace go; others stay."""
        with self._db.connection("resetting the namespace") as conn:
            self._read_identity(conn, " FOR UPDATE")
            conn.execute(self._sql("TRUNCATE {chunks}, {documents}"))
            conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(self.tables.hnsw))
            conn.execute(self._sql("ALTER TABLE {chunks} ALTER COLUMN embedding TYPE vector"))
            conn.execute(
                self._sql("UPDATE {namespaces} SET identity = NULL WHERE id = %s"),
                (self.tables.number,),
            )
        self._identity = None
        self._hnsw = False


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more (got {k})")
