"""When and how a namespace gets its HNSW index (``vector_cosine_ops``): built once the
namespace holds more than ``hnsw_threshold`` chunks, by one client, without blocking writers.
A mixin of ``PostgresStore``, which provides the attributes declared here."""

from __future__ import annotations

from typing import Any

from psycopg import Connection, sql

from engram import IndexIdentity
from engram_postgres.connection import Database
from engram_postgres.options import PostgresOptions
from engram_postgres.schema import Tables

Conn = Connection[Any]


class HnswUpkeep:
    """The HNSW index of one namespace: whether it is there, and building it when due."""

    options: PostgresOptions
    tables: Tables
    _db: Database
    _hnsw: bool

    def _sql(self, text: str, **parts: sql.Composable) -> sql.Composed:
        raise NotImplementedError

    def _read_identity(self, conn: Conn, lock: str = "") -> IndexIdentity | None:
        raise NotImplementedError

    def _has_hnsw(self, conn: Conn | None = None) -> bool:
        """Whether the namespace has a valid HNSW index (remembered once seen: a search on a
        namespace whose index another client dropped is still exact, only slower)."""
        if self._hnsw:
            return True
        if conn is None:
            with self._db.connection("reading the indexes") as own:
                self._hnsw = self._index_state(own) is True
        else:
            self._hnsw = self._index_state(conn) is True
        return self._hnsw

    def _index_state(self, conn: Conn) -> bool | None:
        """None without an HNSW index, else whether it is valid (a concurrent build that was
        cut leaves an invalid one)."""
        row = conn.execute(
            "SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass(%s)",
            (self.tables.hnsw.as_string(conn),),
        ).fetchone()
        return None if row is None else bool(row[0])

    def _build_hnsw(self, *, force_check: bool = False) -> bool:
        """Build the HNSW index once the namespace holds more than ``hnsw_threshold`` chunks;
        whether it was built now. ``CREATE INDEX CONCURRENTLY``: other clients keep writing
        while it builds; one client builds (a session advisory lock, the others go on without
        waiting), and an invalid index a cut build left is dropped and built again."""
        if self._hnsw and not force_check:
            return False
        key = f"engram-postgres-hnsw:{self.options.pg_schema}:{self.tables.number}"
        with self._db.errors("building the HNSW index"), self._db.pool.connection() as conn:
            conn.autocommit = True
            try:
                if self._index_state(conn) is True or not self._ready_for_hnsw(conn):
                    self._hnsw = self._index_state(conn) is True
                    return False
                got = conn.execute(
                    "SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", (key,)
                ).fetchone()
                if not (got and got[0]):
                    return False  # another client is building it
                try:
                    state = self._index_state(conn)
                    if state is True:
                        self._hnsw = True
                        return False
                    if state is False:
                        conn.execute(
                            sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(self.tables.hnsw)
                        )
                    conn.execute(
                        self._sql(
                            "CREATE INDEX CONCURRENTLY {index} ON {chunks} "
                            "USING hnsw (embedding vector_cosine_ops) "
                            "WITH (m = {m}, ef_construction = {ef})",
                            index=self.tables.hnsw_bare,
                            m=sql.Literal(int(self.options.hnsw_m)),
                            ef=sql.Literal(int(self.options.hnsw_ef_construction)),
                        )
                    )
                finally:
                    conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (key,))
            finally:
                conn.autocommit = False
        self._hnsw = True
        return True

    def _ready_for_hnsw(self, conn: Conn) -> bool:
        """An identity (a typed vector column) and more chunks than the threshold."""
        if self._read_identity(conn) is None:
            return False
        row = conn.execute(
            self._sql("SELECT count(*) FROM (SELECT 1 FROM {chunks} LIMIT %s) AS x"),
            (self.options.hnsw_threshold + 1,),
        ).fetchone()
        return row is not None and int(row[0]) > self.options.hnsw_threshold
