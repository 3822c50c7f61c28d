"""Rows a search reads besides its ranking: chunks and ids by rowid, the identity and vector
state every search starts from, keyword candidates from a ranked FTS5 query."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from engram import Candidates, Chunk, IndexIdentity
from engram_sqlite import identity as ident
from engram_sqlite.records import CHUNK_COLUMNS, CHUNKS, to_chunk
from engram_sqlite.vector_changes import State, state_of


def chunks_by_rowid(
    conn: sqlite3.Connection, rowids: list[int], *, vectors: bool
) -> dict[int, Chunk]:
    if not rowids:
        return {}
    columns = CHUNK_COLUMNS if vectors else CHUNK_COLUMNS.replace("v.vector", "NULL")
    rows = conn.execute(
        f"SELECT {columns} FROM {CHUNKS if vectors else 'chunks c'} "
        "WHERE c.rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    ).fetchall()
    return {int(row[0]): to_chunk(row) for row in rows}


def search_meta(conn: sqlite3.Connection) -> tuple[IndexIdentity | None, State]:
    """The identity and the vectors' state, in one statement (every search needs both)."""
    values = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN "
            "('identity', 'generation', 'store_uuid', 'tombstone_floor')"
        ).fetchall()
    )
    raw = values.get("identity")
    return (None if raw is None else ident.parse(str(raw))), state_of(values)


def keyword_candidates(conn: sqlite3.Connection, ranked: tuple[str, list[Any]]) -> Candidates:
    """The top rows of ``ranked`` (``SQLiteStore._keyword_ranked``) as candidates."""
    rows = conn.execute(
        f"SELECT top.rowid, c.id, top.score FROM ({ranked[0]}) AS top "
        "JOIN chunks c ON c.rowid = top.rowid ORDER BY top.score DESC, c.rowid",
        ranked[1],
    ).fetchall()
    return Candidates.of([r[1] for r in rows], [r[2] for r in rows], [r[0] for r in rows])


def ids_by_rowid(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, str]:
    if not rowids:
        return {}
    rows = conn.execute(
        "SELECT rowid, id FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps(rowids),),
    ).fetchall()
    return {int(row[0]): str(row[1]) for row in rows}
