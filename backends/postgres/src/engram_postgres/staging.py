"""How chunks reach their table: one binary ``COPY`` into a session-private staging table, then
one ``INSERT ... SELECT ... ON CONFLICT`` from it (``MERGE_STAGED``), in the writer's
transaction, keeping the upsert semantics, the row locks in id order and the all-or-nothing
transaction. Measured against a statement per row (``executemany``), batch by batch in turn:
the same time for new rows, 0.85 of it for rewritten ones (the server's index upkeep is most of
a write either way; bench/results/*-postgres-write-path.md). The staging table is emptied by
the statement that reads it (and at every commit)."""

from __future__ import annotations

from typing import Any

from psycopg import Connection

# The staging table's column types, in chunk_params' order (binary COPY needs them).
STAGE_TYPES = ["text", "text", "text", "text", "text", "vector", "float8", "text"]
# ``{chunks}`` is the namespace's chunk table, composed by the store (never a user string).
MERGE_STAGED = (
    "WITH staged AS (DELETE FROM pg_temp.engram_chunk_stage RETURNING *) "
    "INSERT INTO {chunks} AS c (id, document_id, document_hash, text, metadata, "
    "embedding, norm, terms) SELECT id, document_id, document_hash, text, "
    "metadata::jsonb, embedding, norm, terms::tsvector FROM staged ORDER BY id "
    "ON CONFLICT (id) DO UPDATE SET document_id = EXCLUDED.document_id, "
    "document_hash = EXCLUDED.document_hash, text = EXCLUDED.text, "
    "metadata = EXCLUDED.metadata, embedding = EXCLUDED.embedding, "
    "norm = EXCLUDED.norm, terms = EXCLUDED.terms"
)


def stage(conn: Connection[Any], rows: list[tuple[Any, ...]]) -> None:
    """Copy ``rows`` (``chunk_params`` tuples) into this session's staging table."""
    conn.execute(
        "CREATE TEMP TABLE IF NOT EXISTS engram_chunk_stage (id text, document_id text, "
        "document_hash text, text text, metadata text, embedding vector, "
        "norm double precision, terms text) ON COMMIT DELETE ROWS"
    )
    with (
        conn.cursor() as cur,
        cur.copy(
            "COPY pg_temp.engram_chunk_stage (id, document_id, document_hash, text, "
            "metadata, embedding, norm, terms) FROM STDIN (FORMAT BINARY)"
        ) as copy,
    ):
        copy.set_types(STAGE_TYPES)
        for row in rows:
            copy.write_row(row)
