"""What SQLite says about the vectors, for the side matrix (``matrix.py``): the generation the
store is at, and the rows set or removed since an older one, which every search and every
append catches up from. Read inside the caller's transaction."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from engram import IndexIdentity
from engram_sqlite import identity as ident
from engram_sqlite.migrations import bump_generation
from engram_sqlite.sidefile import Matrix, Rowids
from engram_sqlite.stampcache import TOKEN_KEY

FLOAT = np.dtype("<f4")


@dataclass(frozen=True)
class State:
    """What ``meta`` says about the vectors right now (read inside a transaction)."""

    generation: int
    store_uuid: str
    tombstone_floor: int


@dataclass(frozen=True)
class WriteStart:
    """What a write reads of ``meta`` when it starts: the rows by key (the documents token
    among them, for ``stampcache``), the identity, and the state its commit will leave."""

    meta: dict[str, Any]
    identity: IndexIdentity | None
    state: State


_WRITER_META = (
    f"SELECT key, value FROM meta WHERE key IN ('{ident.KEY}', '{TOKEN_KEY}', 'store_uuid', "
    "'tombstone_floor')"
)


def start_write(conn: sqlite3.Connection) -> WriteStart:
    """Bump the generation and read the rest in ONE statement (three readers each asked
    for their own before). Nothing but this write changes them before its commit."""
    generation = bump_generation(conn)
    meta = dict(conn.execute(_WRITER_META).fetchall())
    raw = meta.get(ident.KEY)
    identity = None if raw is None else ident.parse(raw)
    return WriteStart(meta, identity, state_of({**meta, "generation": generation}))


def read_state(conn: sqlite3.Connection) -> State:
    return state_of(
        dict(
            conn.execute(
                "SELECT key, value FROM meta WHERE key IN "
                "('generation', 'store_uuid', 'tombstone_floor')"
            ).fetchall()
        )
    )


def state_of(values: dict[str, Any]) -> State:
    """The state in ``meta`` rows read by the caller (key → value)."""
    return State(
        generation=int(values.get("generation", 0)),
        store_uuid=str(values.get("store_uuid", "")),
        tombstone_floor=int(values.get("tombstone_floor", 0)),
    )


def unit_rows(rows: npt.NDArray[Any]) -> Matrix:
    """Each row scaled to length 1 in float32 (zero rows stay zero). Rows are first divided by
    their largest magnitude, so squaring values near the float32 limit cannot overflow."""
    out = np.array(rows, dtype=np.float32, copy=True)
    if out.size == 0:
        return out.reshape(rows.shape)
    peak = np.abs(out).max(axis=1, keepdims=True)
    np.divide(out, peak, out=out, where=peak > 0)
    norm = np.linalg.norm(out, axis=1, keepdims=True)
    np.divide(out, norm, out=out, where=norm > 0)
    return out


def changes(conn: sqlite3.Connection, since: int, dimension: int) -> tuple[Rowids, Matrix, Rowids]:
    """Rowids (ascending) and unit vectors set after generation ``since``, and rowids removed."""
    # Sorted here, not by ORDER BY rowid: with it SQLite scans the whole table in rowid order
    # (every vector read, ~9 ms at 23K rows) instead of the generation index, on every write.
    changed = conn.execute(
        "SELECT rowid, vector FROM vectors WHERE generation > ?", (since,)
    ).fetchall()
    changed.sort(key=_first)
    removed = conn.execute(
        "SELECT rowid FROM vector_tombstones WHERE generation > ?", (since,)
    ).fetchall()
    rowids = np.fromiter((r[0] for r in changed), dtype=np.int64, count=len(changed))
    raw = np.frombuffer(b"".join(r[1] for r in changed), dtype=FLOAT)
    gone = np.fromiter((r[0] for r in removed), dtype=np.int64, count=len(removed))
    return rowids, unit_rows(raw.reshape(len(changed), dimension)), gone


def pending(conn: sqlite3.Connection, since: int) -> int:
    """Rows whose vector was set or removed after generation ``since`` (by the indexes)."""
    row = conn.execute(
        "SELECT (SELECT count(*) FROM vectors WHERE generation > ?1)"
        " + (SELECT count(*) FROM vector_tombstones WHERE generation > ?1)",
        (since,),
    ).fetchone()
    return int(row[0])


def _first(row: tuple[int, bytes]) -> int:
    return row[0]
