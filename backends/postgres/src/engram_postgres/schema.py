"""engram's tables in PostgreSQL: versioned migrations under an advisory lock, and the tables of
each namespace.

Layout, in the schema of ``[store] schema`` (default ``engram``):

- ``migrations(version, applied_at)``: one row per applied migration;
- ``namespaces(id, name, identity)``: one row per namespace, its index identity as jsonb;
- per namespace ``chunks_<id>`` and ``documents_<id>``, named by the namespace's number, never
  by its text (which is only ever a bound value).

Why a table per namespace rather than one table with a ``namespace`` column: pgvector indexes a
typed column (``vector(384)``), and each namespace may have its own embedder and dimension. With
one table the column must stay untyped and each namespace needs a partial expression index
(``(embedding::vector(384)) WHERE namespace = '...'``), which the planner only uses when it can
prove the literal predicate, so every search would have to splice the namespace into SQL. A table
per namespace gets a plain ``vector(dim)`` column (typed when the identity is recorded), a plain
HNSW index, exact scans that read only its own rows, and a ``reset`` that is a TRUNCATE.

Migrations run under ``pg_advisory_lock`` keyed by the schema: two clients opening a new schema
at once → one migrates, the other waits on the lock and then finds the work done.
"""

from __future__ import annotations

from typing import Any

from psycopg import Connection, sql

LOCK_PREFIX = "engram-postgres:"
# The ISO dates and datetimes a date range reads (``filters.py`` names the known limit).
ISO_PATTERN = (
    r"^\d{4}-\d{2}-\d{2}"
    r"([T ]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}(:?\d{2})?)?)?$"
)

MIGRATIONS: list[tuple[int, str]] = [
    (
        1,
        """
        CREATE TABLE IF NOT EXISTS {schema}.namespaces (
            id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
            name text NOT NULL UNIQUE,
            identity jsonb,
            created_at timestamptz NOT NULL DEFAULT now()
        );
        CREATE OR REPLACE FUNCTION {schema}.iso_time(value text) RETURNS timestamptz
        LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE SET timezone = 'UTC' AS $fn$
        BEGIN
            IF value ~ {iso_pattern} THEN
                RETURN value::timestamptz;
            END IF;
            RETURN NULL;
        EXCEPTION WHEN others THEN
            RETURN NULL;
        END
        $fn$;
        """,
    ),
]
LATEST = MIGRATIONS[-1][0]


def lock_key(schema: str) -> str:
    return LOCK_PREFIX + schema


def schema_version(conn: Connection[Any], schema: str) -> int:
    """The schema's migration version, 0 when it has none yet."""
    if not exists(conn, sql.Identifier(schema, "migrations")):
        return 0
    found = conn.execute(
        sql.SQL("SELECT coalesce(max(version), 0) FROM {}").format(
            sql.Identifier(schema, "migrations")
        )
    ).fetchone()
    return int(found[0]) if found else 0


def migrate(conn: Connection[Any], schema: str) -> list[int]:
    """Apply the missing migrations under the schema's advisory lock; the versions applied.

    ``conn`` is in autocommit mode: the lock is the session's, each migration its own
    transaction, so a client that dies mid-migration leaves the previous version whole.
    """
    conn.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock_key(schema),))
    try:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
        ident = sql.Identifier(schema)
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(ident))
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {}.migrations ("
                "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())"
            ).format(ident)
        )
        current = schema_version(conn, schema)
        applied: list[int] = []
        for version, statement in MIGRATIONS:
            if version <= current:
                continue
            with conn.transaction():
                conn.execute(
                    sql.SQL(statement).format(schema=ident, iso_pattern=sql.Literal(ISO_PATTERN))
                )
                conn.execute(
                    sql.SQL("INSERT INTO {}.migrations (version) VALUES (%s)").format(ident),
                    (version,),
                )
            applied.append(version)
        return applied
    finally:
        conn.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key(schema),))


def exists(conn: Connection[Any], table: sql.Identifier) -> bool:
    """Whether ``table`` (a qualified identifier) exists, without taking any lock on it."""
    row = conn.execute("SELECT to_regclass(%s) IS NOT NULL", (table.as_string(conn),)).fetchone()
    return bool(row and row[0])


class Tables:
    """The identifiers of one namespace's tables and indexes (from its number)."""

    def __init__(self, schema: str, number: int) -> None:
        self.schema = schema
        self.number = number
        self.chunks = sql.Identifier(schema, f"chunks_{number}")
        self.documents = sql.Identifier(schema, f"documents_{number}")
        self.namespaces = sql.Identifier(schema, "namespaces")
        self.hnsw_name = f"chunks_{number}_hnsw"
        self.hnsw = sql.Identifier(schema, self.hnsw_name)
        self.hnsw_bare = sql.Identifier(self.hnsw_name)

    def create(self, conn: Connection[Any]) -> None:
        """The namespace's tables, if missing (the vector column untyped until an identity)."""
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {chunks} ("
                " seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,"
                " id text PRIMARY KEY,"
                " document_id text NOT NULL,"
                " document_hash text NOT NULL DEFAULT '',"
                " text text NOT NULL,"
                " metadata jsonb NOT NULL,"
                " embedding vector,"
                " norm double precision,"
                " terms tsvector NOT NULL)"
            ).format(chunks=self.chunks)
        )
        conn.execute(
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} (document_id)").format(
                sql.Identifier(f"chunks_{self.number}_document"), self.chunks
            )
        )
        conn.execute(
            sql.SQL("CREATE INDEX IF NOT EXISTS {} ON {} USING gin (terms)").format(
                sql.Identifier(f"chunks_{self.number}_terms"), self.chunks
            )
        )
        conn.execute(
            sql.SQL(
                "CREATE TABLE IF NOT EXISTS {} ("
                " id text PRIMARY KEY, hash text NOT NULL, metadata jsonb NOT NULL)"
            ).format(self.documents)
        )


def namespace_number(conn: Connection[Any], schema: str, name: str) -> int:
    """The namespace's number, creating it and its tables on first use (under the schema's
    advisory lock for this transaction, so two clients create it once)."""
    namespaces = sql.Identifier(schema, "namespaces")
    select = sql.SQL("SELECT id FROM {} WHERE name = %s").format(namespaces)
    row = conn.execute(select, (name,)).fetchone()
    if row is not None and exists(conn, Tables(schema, int(row[0])).chunks):
        return int(row[0])
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (lock_key(schema),))
        row = conn.execute(select, (name,)).fetchone()
        if row is None:
            row = conn.execute(
                sql.SQL("INSERT INTO {} (name) VALUES (%s) RETURNING id").format(namespaces),
                (name,),
            ).fetchone()
        assert row is not None
        number = int(row[0])
        Tables(schema, number).create(conn)
    return number
