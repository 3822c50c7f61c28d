"""Rows a search reads besides its ranking: chunks and ids by rowid, the identity and vector
state every search starts from."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from engram import Chunk, IndexIdentity
from engram_sqlite import identity as ident
from engram_sqlite.records import CHUNK_COLUMNS, CHUNKS, TEXT_COLUMNS, to_chunk
from engram_sqlite.vector_changes import State, state_of

BOUND_UP_TO = 256  # rowids bound one per parameter up to here; more go as one JSON list


def rowid_set(rowids: list[int]) -> tuple[str, list[Any]]:
    """``rowids`` as the right side of ``IN``, with its parameters. A search's few rows are bound
    one per parameter (~25% faster than ``json_each`` measured); their count is padded to a
    power of two with the last rowid, so a few statement texts serve every search and stay in
    the connection's statement cache."""
    if len(rowids) > BOUND_UP_TO:
        return "(SELECT value FROM json_each(?))", [json.dumps(rowids)]
    size = 8
    while size < len(rowids):
        size *= 2
    return f"({', '.join('?' * size)})", rowids + rowids[-1:] * (size - len(rowids))


def chunks_by_rowid(
    conn: sqlite3.Connection, rowids: list[int], *, vectors: bool
) -> dict[int, Chunk]:
    if not rowids:
        return {}
    source = f"{CHUNK_COLUMNS} FROM {CHUNKS}" if vectors else f"{TEXT_COLUMNS} FROM chunks c"
    within, params = rowid_set(rowids)
    rows = conn.execute(f"SELECT {source} WHERE c.rowid IN {within}", params).fetchall()
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


def ids_by_rowid(conn: sqlite3.Connection, rowids: list[int]) -> dict[int, str]:
    if not rowids:
        return {}
    within, params = rowid_set(rowids)
    rows = conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN {within}", params).fetchall()
    return {int(row[0]): str(row[1]) for row in rows}
