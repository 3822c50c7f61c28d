"""Rows a search reads besides its ranking: chunks and ids by rowid, the identity and vector
state every search starts from."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
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


class SearchMeta:
    """``search_meta``, read again only when the file may have changed since: another
    connection committed (``PRAGMA data_version``, which also starts the read transaction's
    snapshot when it is its first statement) or this one wrote (``writes``, its count of write
    transactions). Every search starts here; the pragma costs a third of the meta rows."""

    def __init__(self, writes: Callable[[], int]) -> None:
        self._writes = writes
        self._seen: tuple[int, int] | None = None
        self._meta: tuple[IndexIdentity | None, State] | None = None

    def __call__(self, conn: sqlite3.Connection) -> tuple[IndexIdentity | None, State]:
        seen = (int(conn.execute("PRAGMA data_version").fetchone()[0]), self._writes())
        if seen != self._seen or self._meta is None:
            # Read after the pragma: a commit between the two leaves ``seen`` behind what was
            # read, so the next call reads again; never the other way round.
            self._meta, self._seen = search_meta(conn), seen
        return self._meta


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
