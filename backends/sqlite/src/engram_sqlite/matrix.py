"""The side matrix: every chunk's unit vector in one float32 array, searched exactly with numpy.

SQLite stays the source of truth: the ``vectors`` table holds each vector as given, with the
``generation`` of the write that set it, and ``vector_tombstones`` the generation at which a
vector was removed. Every write transaction bumps ``meta.generation``. The side file
(``<index>-vectors``) is a snapshot of the unit vectors at one generation; a search sees

    the snapshot, minus every rowid changed or removed after it, plus those rows' current vectors

all read in the search's own read transaction, so the answer is what SQLite holds at that moment,
whatever the file's age. A missing, damaged, foreign (another store's ``store_uuid``), older
format or too stale snapshot is rebuilt from SQLite, and replaced atomically (temp file, fsync,
rename). Writers never touch the file: a crash or ``kill -9`` mid-write can leave SQLite rolled
back, never the file ahead of it, and a concurrent writer in another process is just a newer
generation to catch up with.

The file: a 4,096-byte header (magic + JSON: format, store_uuid, generation, dimension, count),
then ``count`` int64 rowids in ascending order, then the ``count x dimension`` float32 matrix. It
is memory-mapped, so reopening a store costs no load.
"""

from __future__ import annotations

import contextlib
import json
import os
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import numpy.typing as npt

FORMAT = 1
MAGIC = b"ENGRAMVM"
HEADER_BYTES = 4096
REBUILD_AT = 1000  # changed rows after the snapshot, at least; or an eighth of the snapshot
_ROWID = np.dtype("<i8")
_FLOAT = np.dtype("<f4")

Rowids = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class State:
    """What ``meta`` says about the vectors right now (read inside a transaction)."""

    generation: int
    store_uuid: str
    tombstone_floor: int


@dataclass
class Snapshot:
    """Unit vectors of every rowid that had one at ``generation``, rowids ascending."""

    store_uuid: str
    generation: int
    rowids: Rowids
    matrix: Matrix

    def __len__(self) -> int:
        return len(self.rowids)


@dataclass
class View:
    """What one generation searches: a snapshot with the rows changed since masked out, and those
    rows' current vectors beside it."""

    state: State
    snapshot: Snapshot
    alive: npt.NDArray[np.intp] | None  # snapshot positions still current; None = all
    delta_rowids: Rowids
    delta_matrix: Matrix
    dimension: int

    def top_k(self, query: Matrix, k: int, allowed: Rowids | None) -> list[tuple[int, float]]:
        """(rowid, cosine) of the k best rows, ties by rowid; only ``allowed`` rowids if given."""
        rowids, scores = self._score_snapshot(query, allowed)
        if len(self.delta_rowids):
            keep = (
                np.ones(len(self.delta_rowids), dtype=bool)
                if allowed is None
                else np.isin(self.delta_rowids, allowed)
            )
            rowids = np.concatenate([rowids, self.delta_rowids[keep]])
            scores = np.concatenate([scores, self.delta_matrix[keep] @ query])
        return _best(rowids, scores, k)

    def _score_snapshot(self, query: Matrix, allowed: Rowids | None) -> tuple[Rowids, Matrix]:
        snap = self.snapshot
        n = len(snap)
        if n == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if allowed is None:
            scores = snap.matrix @ query
            if self.alive is None:
                return snap.rowids, scores
            return snap.rowids[self.alive], scores[self.alive]
        positions = np.searchsorted(snap.rowids, allowed)
        inside = positions < n
        positions = positions[inside]
        positions = positions[snap.rowids[positions] == allowed[inside]]
        if self.alive is not None:
            positions = np.intersect1d(positions, self.alive, assume_unique=True)
        if len(positions) * 4 > n:  # most rows: one matmul beats copying the rows out
            return snap.rowids[positions], (snap.matrix @ query)[positions]
        return snap.rowids[positions], snap.matrix[positions] @ query


class SideMatrix:
    """The store's vector index. ``view(conn)`` must be called inside a read transaction."""

    def __init__(self, path: Path | None) -> None:
        self.path = path  # None: an in-memory store keeps its snapshot in memory only
        self._view: View | None = None
        self._snapshot: Snapshot | None = None

    def view(self, conn: sqlite3.Connection, dimension: int) -> View:
        state = read_state(conn)
        cached = self._view
        if cached is not None and cached.state == state and cached.dimension == dimension:
            return cached
        snapshot = self._usable(self._snapshot, state, dimension)
        if snapshot is None:
            snapshot = self._usable(self._load(), state, dimension)
        view = None if snapshot is None else _catch_up(conn, state, snapshot, dimension)
        if view is None:
            snapshot = self.rebuild(conn, dimension)
            view = _catch_up(conn, state, snapshot, dimension)
            assert view is not None  # a fresh snapshot has nothing to catch up on
        self._snapshot = snapshot
        self._view = view
        return view

    def rebuild(self, conn: sqlite3.Connection, dimension: int) -> Snapshot:
        """A snapshot of every vector in SQLite now, written to the side file if there is one."""
        state = read_state(conn)
        rows = conn.execute("SELECT rowid, vector FROM vectors ORDER BY rowid").fetchall()
        rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        raw = np.frombuffer(b"".join(r[1] for r in rows), dtype=_FLOAT)
        matrix = unit_rows(raw.reshape(len(rows), dimension))
        del rows, raw
        snapshot = Snapshot(state.store_uuid, state.generation, rowids, matrix)
        if self.path is not None:
            with contextlib.suppress(OSError):  # a read-only folder: search from memory instead
                _write(self.path, snapshot)
                loaded = self._load()
                if loaded is not None and loaded.generation == snapshot.generation:
                    snapshot = loaded  # the memory map, so the copy in memory can go
        self._snapshot = snapshot
        self._view = None
        return snapshot

    def forget(self) -> None:
        """Drop what is cached (the store is closing or was reset)."""
        self._view = None
        self._snapshot = None

    @staticmethod
    def _usable(snapshot: Snapshot | None, state: State, dimension: int) -> Snapshot | None:
        if snapshot is None or snapshot.store_uuid != state.store_uuid:
            return None
        if snapshot.matrix.shape[1:] != (dimension,):
            return None
        if not state.tombstone_floor <= snapshot.generation <= state.generation:
            return None  # older than the kept tombstones, or newer than this transaction
        return snapshot

    def _load(self) -> Snapshot | None:
        """The side file as a memory map, or None if it is missing, damaged or another format.

        Header, size and map all come from one open file, so a rename by another process in
        between cannot pair one file's header with another's data."""
        if self.path is None:
            return None
        try:
            with self.path.open("rb") as fh:
                return _map(fh)
        except (ValueError, KeyError, TypeError, OSError):
            return None


def _map(fh: BinaryIO) -> Snapshot | None:
    head = fh.read(HEADER_BYTES)
    if len(head) != HEADER_BYTES or not head.startswith(MAGIC):
        return None
    meta = json.loads(head[len(MAGIC) :].rstrip(b"\0 ").decode("utf-8"))
    count, dim = int(meta["count"]), int(meta["dimension"])
    if meta["format"] != FORMAT or count < 0 or dim < 1:
        return None
    size = os.fstat(fh.fileno()).st_size
    if size != HEADER_BYTES + count * (_ROWID.itemsize + dim * _FLOAT.itemsize):
        return None
    if count == 0:
        rowids: Rowids = np.empty(0, dtype=np.int64)
        matrix: Matrix = np.empty((0, dim), dtype=np.float32)
    else:
        rowids = np.memmap(fh, dtype=_ROWID, mode="r", offset=HEADER_BYTES, shape=(count,))
        matrix = np.memmap(
            fh,
            dtype=_FLOAT,
            mode="r",
            offset=HEADER_BYTES + count * _ROWID.itemsize,
            shape=(count, dim),
        )
    return Snapshot(str(meta["store_uuid"]), int(meta["generation"]), rowids, matrix)


def read_state(conn: sqlite3.Connection) -> State:
    values = dict(
        conn.execute(
            "SELECT key, value FROM meta WHERE key IN "
            "('generation', 'store_uuid', 'tombstone_floor')"
        ).fetchall()
    )
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


def _catch_up(
    conn: sqlite3.Connection, state: State, snapshot: Snapshot, dimension: int
) -> View | None:
    """The view of ``state`` from ``snapshot``; None when so much changed that rebuilding is
    cheaper than masking."""
    since = snapshot.generation
    if since == state.generation:
        changed: list[tuple[int, bytes]] = []
        removed: list[tuple[int]] = []
    else:
        changed = conn.execute(
            "SELECT rowid, vector FROM vectors WHERE generation > ? ORDER BY rowid", (since,)
        ).fetchall()
        removed = conn.execute(
            "SELECT rowid FROM vector_tombstones WHERE generation > ?", (since,)
        ).fetchall()
    if len(changed) + len(removed) > max(REBUILD_AT, len(snapshot) // 8):
        return None
    delta_rowids = np.fromiter((r[0] for r in changed), dtype=np.int64, count=len(changed))
    raw = np.frombuffer(b"".join(r[1] for r in changed), dtype=_FLOAT)
    delta_matrix = unit_rows(raw.reshape(len(changed), dimension))
    alive: npt.NDArray[np.intp] | None = None
    if changed or removed:
        gone = np.concatenate([delta_rowids, np.fromiter((r[0] for r in removed), dtype=np.int64)])
        dead = np.isin(snapshot.rowids, gone)
        if dead.any():
            alive = np.flatnonzero(~dead)
    return View(state, snapshot, alive, delta_rowids, delta_matrix, dimension)


def _best(rowids: Rowids, scores: Matrix, k: int) -> list[tuple[int, float]]:
    """The k highest scores, ties broken by the smaller rowid (as the reference does)."""
    n = len(scores)
    if n == 0 or k <= 0:
        return []
    if n > k:
        threshold = np.partition(scores, n - k)[n - k]
        picked = np.flatnonzero(scores >= threshold)
        rowids, scores = rowids[picked], scores[picked]
    order = np.lexsort((rowids, -scores))[:k]
    return [
        (int(rowid), min(1.0, max(-1.0, float(score))))
        for rowid, score in zip(rowids[order], scores[order], strict=True)
    ]


def _write(path: Path, snapshot: Snapshot) -> None:
    """Write ``snapshot`` beside the index: a temp file, fsync, then an atomic rename."""
    count, dim = snapshot.matrix.shape
    meta = {
        "format": FORMAT,
        "store_uuid": snapshot.store_uuid,
        "generation": snapshot.generation,
        "dimension": dim,
        "count": count,
    }
    head = MAGIC + json.dumps(meta).encode("utf-8")
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(head.ljust(HEADER_BYTES, b" "))
            fh.write(np.ascontiguousarray(snapshot.rowids, dtype=_ROWID).tobytes())
            fh.write(np.ascontiguousarray(snapshot.matrix, dtype=_FLOAT).tobytes())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
