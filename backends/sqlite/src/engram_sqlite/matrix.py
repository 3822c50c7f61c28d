"""The side matrix: every chunk's unit vector in float32 records, searched exactly with numpy.

SQLite stays the source of truth: the ``vectors`` table holds each vector as given, with the
``generation`` of the write that set it, and ``vector_tombstones`` the generation at which a
vector was removed. Every write transaction bumps ``meta.generation``. The side file
(``<index>-vectors``, format in ``sidefile.py``) holds the unit vectors as of one generation; a
search sees

    the file, minus every rowid changed or removed after it, plus those rows' current vectors

all read in the search's own read transaction, so the answer is what SQLite holds at that moment,
whatever the file's age.

The writing process keeps the file fresh: after a committed write it appends the vectors that
changed (``persist``) once at least ``APPEND_AT`` rows changed since the file, and at close, so a
bulk index ends with the file written and the first query costs what any query does. Fewer rows
are not worth an append and its fsync on every small write (a one-note edit): a search reads
them from SQLite as it reads any row newer than the file (``vector_changes.py``).

A replaced record still costs every search a row of the scan, so once more than
1/``COMPACT_SHARE`` of the records are replaced ones the writer rewrites the file without them:
searches stay within a few percent of a scan of the live rows alone, and the rewrites cost the
writer at most ``COMPACT_SHARE`` records written per vector it changed. A search never writes
the file unless it is missing, damaged, another store's or older than the kept tombstones; a
file that fell far behind (a writer that could not write it) is caught up in memory from the
rows that changed. A crash or ``kill -9`` mid-write leaves SQLite rolled back and the file at an
older, true generation, never ahead of SQLite.
"""

from __future__ import annotations

import contextlib
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engram_sqlite import sidefile
from engram_sqlite.sidefile import Header, Matrix, Records, Rowids
from engram_sqlite.vector_changes import FLOAT, State, changes, pending, read_state, unit_rows

REBUILD_AT = 1000  # rows changed since the snapshot at which a search folds them in memory
APPEND_AT = 64  # rows changed since the file at which the writer appends them
COMPACT_SHARE = 32  # the writer rewrites the file once more than 1/32 of its records are dead
_NONE = np.empty(0, dtype=np.intp)


@dataclass
class Snapshot:
    """The records of the side file (or of memory) at ``generation``, with what is live in them:
    ``live_rowids`` ascending and ``live_pos`` their record positions (None: record i is live row
    i, the usual file after a bulk index), and ``dead`` the positions of replaced records.
    ``ascending`` says the rowids are known to be live and ascending (the file's header says so):
    checking it would read every record of the map, which on a fresh map faults in the file."""

    store_uuid: str
    generation: int
    rowids: Rowids
    matrix: Matrix
    packed: sidefile.Packed | None = None  # the file's records, when mapped from one
    ascending: bool = False
    mapped: tuple[int, int, int] | None = None  # the file mapped (``sidefile.cut_below``)
    live_rowids: Rowids = field(init=False)
    live_pos: npt.NDArray[np.intp] | None = field(init=False)
    dead: npt.NDArray[np.intp] = field(init=False)

    def __post_init__(self) -> None:
        r = self.rowids
        n = len(r)
        if n == 0 or self.ascending or (r[0] > 0 and bool(np.all(r[1:] > r[:-1]))):
            self.live_rowids, self.live_pos, self.dead = np.asarray(r, dtype=np.int64), None, _NONE
            return
        magnitude = np.abs(r)
        order = np.argsort(magnitude, kind="stable")  # equal rowids stay in write order
        ordered = magnitude[order]
        last = np.ones(n, dtype=bool)
        last[:-1] = ordered[:-1] != ordered[1:]
        keep = order[last]
        keep = keep[r[keep] > 0]  # the last record of a removed row is its removal
        self.live_rowids, self.live_pos = magnitude[keep], keep.astype(np.intp)
        dead = np.ones(n, dtype=bool)
        dead[keep] = False
        self.dead = np.flatnonzero(dead)

    def __len__(self) -> int:
        return len(self.live_rowids)

    def locate(self, wanted: Rowids) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.intp]]:
        """Which ``wanted`` rowids are live here, and their record positions."""
        idx = np.searchsorted(self.live_rowids, wanted)
        found = idx < len(self.live_rowids)
        found[found] = self.live_rowids[idx[found]] == wanted[found]
        idx = idx[found]
        return found, (idx if self.live_pos is None else self.live_pos[idx])

    def live(self) -> tuple[Rowids, Matrix]:
        """Live rowids ascending, and their vectors (a copy when records were replaced)."""
        if self.live_pos is None:
            return self.live_rowids, self.matrix
        return self.live_rowids, np.asarray(self.matrix[self.live_pos])


Best = tuple[Rowids, npt.NDArray[np.float64]]  # rowids and their cosines, best first


@dataclass
class View:
    """What one generation searches: a snapshot with the rows changed since hidden, and those
    rows' current vectors beside it (``delta_rowids`` ascending)."""

    state: State
    snapshot: Snapshot
    stale: npt.NDArray[np.intp]  # live snapshot positions whose row changed since
    delta_rowids: Rowids
    delta_matrix: Matrix
    dimension: int

    def top_k(self, query: Matrix, k: int, allowed: Rowids | None) -> tuple[Best, Matrix | None]:
        """Rowids and cosines of the k best rows, ties by rowid; only ``allowed`` rowids if
        given. Beside them, without ``allowed``, the scan's score of every snapshot record
        (``scores_for`` reads more cosines of this query from it)."""
        rowids, scores = self._score_snapshot(query, allowed)
        scanned = scores if allowed is None else None
        if len(self.delta_rowids):
            keep = (
                np.ones(len(self.delta_rowids), dtype=bool)
                if allowed is None
                else np.isin(self.delta_rowids, allowed)
            )
            rowids = np.concatenate([rowids, self.delta_rowids[keep]])
            scores = np.concatenate([scores, self.delta_matrix[keep] @ query])
        return _best(rowids, scores, k), scanned

    def scores_for(
        self, rowids: Rowids, query: Matrix, scanned: Matrix | None = None
    ) -> npt.NDArray[np.float64]:
        """Cosine of each row with ``query`` (one gather and one product), NaN without a vector;
        gathered from ``scanned`` (``top_k``'s scores of this query) when every row is there."""
        found, positions = self.snapshot.locate(rowids)
        if len(positions) == len(rowids) and not len(self.stale) and not len(self.delta_rowids):
            picked = scanned[positions] if scanned is not None else None
            if picked is None:
                picked = self.snapshot.matrix[positions] @ query
            cosines: npt.NDArray[np.float64] = np.clip(picked, -1.0, 1.0).astype(np.float64)
            return cosines
        out = np.full(len(rowids), np.nan)
        where = np.flatnonzero(found)
        if len(self.stale) and len(positions):
            fresh = ~np.isin(positions, self.stale)
            where, positions = where[fresh], positions[fresh]
        if len(positions):
            out[where] = np.clip(self.snapshot.matrix[positions] @ query, -1.0, 1.0)
        if len(self.delta_rowids):
            idx = np.searchsorted(self.delta_rowids, rowids)
            hit = idx < len(self.delta_rowids)
            hit[hit] = self.delta_rowids[idx[hit]] == rowids[hit]
            if hit.any():
                out[hit] = np.clip(self.delta_matrix[idx[hit]] @ query, -1.0, 1.0)
        return out

    def _score_snapshot(self, query: Matrix, allowed: Rowids | None) -> tuple[Rowids, Matrix]:
        snap = self.snapshot
        n = len(snap.rowids)
        if n == 0:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float32)
        if allowed is None:
            scores = snap.matrix @ query
            for hidden in (snap.dead, self.stale):
                if len(hidden):
                    scores[hidden] = -np.inf  # _best never returns these
            return snap.rowids, scores
        _, positions = snap.locate(allowed)
        if len(self.stale):
            positions = positions[~np.isin(positions, self.stale)]
        if len(positions) * 4 > n:  # most rows: one matmul beats copying the rows out
            return snap.rowids[positions], (snap.matrix @ query)[positions]
        return snap.rowids[positions], snap.matrix[positions] @ query


class SideMatrix:
    """The store's vector index. ``view(conn)`` and ``persist(conn)`` run in a read transaction."""

    def __init__(self, path: Path | None) -> None:
        self.path = path  # None: an in-memory store keeps its snapshot in memory only
        self._view: View | None = None
        self._snapshot: Snapshot | None = None
        self._header = None if path is None else sidefile.HeaderCache(path)

    def view(self, conn: sqlite3.Connection, dimension: int, state: State | None = None) -> View:
        """The view of the read transaction ``conn`` is in (``state``: its ``read_state``)."""
        state = read_state(conn) if state is None else state
        self._drop_cut_map()
        cached = self._view
        if cached is not None and cached.state == state and cached.dimension == dimension:
            return cached
        snapshot = _usable(self._snapshot, state, dimension)
        if snapshot is None or snapshot.generation < state.generation:
            newer = self._load(state, dimension, newer_than=-1 if snapshot is None else None)
            if newer is not None and (snapshot is None or newer.generation > snapshot.generation):
                snapshot = newer
        if snapshot is None:  # missing, damaged, another store's or too old: the one rebuild
            snapshot = self._rebuild(conn, state, dimension)
        view = _catch_up(conn, state, snapshot, dimension)
        self._snapshot = view.snapshot
        self._view = view
        return view

    def _drop_cut_map(self) -> None:
        """Forget a snapshot mapped from a file someone cut short since: reading it would kill
        the process (SIGBUS); the next view reads the file again, or rebuilds it from SQLite."""
        snapshot = self._snapshot
        mapped = None if snapshot is None else snapshot.mapped
        if mapped is not None and self.path is not None and sidefile.cut_below(self.path, mapped):
            self.forget()

    def persist(
        self, conn: sqlite3.Connection, dimension: int, *, at_least: int = APPEND_AT
    ) -> bool:
        """Bring the side file up to this transaction's generation by appending what changed
        (the writer calls this after each commit), rewriting it when 1/``COMPACT_SHARE`` is
        dead; left as it is while fewer than ``at_least`` rows changed since it. True when the
        file is left at this generation (or past it), or there is no file to keep."""
        current = self.current(conn, dimension, at_least=at_least)
        if current is not None:
            return current
        with contextlib.suppress(OSError):
            self._append(conn, dimension)
            return True
        return False

    def current(
        self,
        conn: sqlite3.Connection,
        dimension: int,
        *,
        at_least: int = APPEND_AT,
        state: State | None = None,
    ) -> bool | None:
        """``persist``'s question alone, so a writer can ask it inside its write transaction
        (where nothing can change the answer before the commit) instead of opening a read
        after it: True when the file is at this generation (or there is none to keep), False
        when it may stay behind (fewer than ``at_least`` rows changed, or it cannot be read),
        None when it takes an append. ``state``: this transaction's, when the writer knows it."""
        if self.path is None:
            return True
        try:
            state = read_state(conn) if state is None else state
            header = self._header() if self._header is not None else None
            if header is not None and _fits(header, state, dimension):
                if header.generation == state.generation:
                    return True
                if pending(conn, header.generation) < at_least:
                    return False  # searches read these few rows from SQLite
        except OSError:
            return False
        return None

    def _append(self, conn: sqlite3.Connection, dimension: int) -> None:
        assert self.path is not None
        with sidefile.locked(self.path):
            state = read_state(conn)
            header = sidefile.header_of(self.path)  # the records are mapped only to compact
            if header is not None and _ahead(header, state, dimension):
                return  # another writer already appended past this transaction
            if header is None or not _fits(header, state, dimension):
                self._rebuild(conn, state, dimension)
                return
            if header.generation == state.generation:
                return
            rowids, matrix, removed = changes(conn, header.generation, dimension)
            replaced = int(np.count_nonzero(rowids <= header.top)) + len(removed)
            count = header.count + len(rowids) + len(removed)
            if (header.dead + replaced) * COMPACT_SHARE > count and count > REBUILD_AT:
                current = sidefile.load(self.path)
                if current is None or current.header != header:  # not the file just read
                    self._rebuild(conn, state, dimension)
                    return
                base = _snapshot_of(current)
                self._save(state, _merged(base, rowids, matrix, removed), dimension)
                return
            rowids = np.concatenate([rowids, -removed])
            matrix = np.concatenate([matrix, np.zeros((len(removed), dimension), FLOAT)])
            new = Header(
                state.store_uuid,
                state.generation,
                dimension,
                count,
                header.dead + replaced,
                max(header.top, int(rowids.max(initial=0))),
                header.ascending and replaced == 0,  # only rows above ``top`` were added
            )
            if sidefile.append(self.path, header, new, sidefile.pack(rowids, matrix)):
                self._keep(new)

    def _keep(self, header: Header) -> None:
        """Hold the file just appended as this process's snapshot, so a search here does not
        map and check it again; only when its header says every record is live (a bulk index),
        where that costs no scan (otherwise the next search finds the live rows)."""
        if not header.ascending or self.path is None:
            return
        loaded = sidefile.load(self.path)
        if loaded is not None and loaded.header == header:
            self._snapshot = _snapshot_of(loaded)
            self._view = None

    def compact(
        self, conn: sqlite3.Connection, dimension: int, base: Snapshot | None = None
    ) -> Snapshot:
        """A file of the live rows only, at this transaction's generation (``optimize``)."""
        state = read_state(conn)
        base = _usable(base, state, dimension) or _usable(
            self._load(state, dimension, newer_than=-1), state, dimension
        )
        if base is None:
            return self._rebuild(conn, state, dimension)
        if base.generation == state.generation:
            since = np.empty(0, np.int64), _empty(dimension), np.empty(0, np.int64)
        else:
            since = changes(conn, base.generation, dimension)
        return self._save(state, _merged(base, *since), dimension)

    def rows(self) -> int:
        """Vectors in the last view searched (0 before the first search): a size hint."""
        return 0 if self._snapshot is None else len(self._snapshot)

    def forget(self) -> None:
        """Drop what is cached (the store is closing or was reset)."""
        self._view = None
        self._snapshot = None

    def _rebuild(self, conn: sqlite3.Connection, state: State, dimension: int) -> Snapshot:
        """A snapshot of every vector in SQLite now, written to the side file if there is one."""
        rows = conn.execute("SELECT rowid, vector FROM vectors ORDER BY rowid").fetchall()
        records = np.empty(len(rows), dtype=sidefile.record_dtype(dimension))
        records["rowid"] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
        raw = np.frombuffer(b"".join(r[1] for r in rows), dtype=FLOAT)
        records["vector"] = unit_rows(raw.reshape(len(rows), dimension))
        del rows, raw
        return self._save(state, records, dimension)

    def _save(self, state: State, records: sidefile.Packed, dimension: int) -> Snapshot:
        """Write ``records`` (live rows, rowids ascending) as the whole file; the snapshot of
        ``state`` they hold, as the memory map if writing worked."""
        self._view = None
        rowids, matrix = records["rowid"], records["vector"]
        snapshot = Snapshot(state.store_uuid, state.generation, rowids, matrix)
        self._snapshot = snapshot
        if self.path is None:
            return snapshot
        top = int(rowids[-1]) if len(rowids) else 0
        header = Header(state.store_uuid, state.generation, dimension, len(rowids), 0, top, True)
        with contextlib.suppress(OSError), sidefile.locked(self.path):
            on_disk = sidefile.load(self.path)
            newer = State(header.generation + 1, header.store_uuid, 0)
            if on_disk is not None and _ahead(on_disk.header, newer, dimension):
                return snapshot  # a writer moved the file past this transaction: keep theirs
            sidefile.rewrite(self.path, header, records)
            loaded = sidefile.load(self.path)
            if loaded is not None and loaded.header == header:
                self._snapshot = _snapshot_of(loaded)  # the memory map; the copy can go
        return self._snapshot

    def _load(self, state: State, dimension: int, *, newer_than: int | None) -> Snapshot | None:
        """The side file if it is usable (and newer than ``newer_than``, by default the cached
        snapshot's generation, so an unchanged file is not mapped and checked again: its header
        alone is read)."""
        if self.path is None:
            return None
        if newer_than is None:
            newer_than = -1 if self._snapshot is None else self._snapshot.generation
        if newer_than >= 0:
            header = sidefile.header_of(self.path)
            if header is None or header.generation <= newer_than:
                return None
        records = sidefile.load(self.path)
        if records is None or records.header.generation <= newer_than:
            return None
        if not _fits(records.header, state, dimension):
            return None
        return _snapshot_of(records)


def _fits(header: Header, state: State, dimension: int) -> bool:
    """Whether a file can be caught up to ``state``: this store's, this dimension, not older
    than the kept tombstones nor newer than the transaction."""
    return (
        header.store_uuid == state.store_uuid
        and header.dimension == dimension
        and state.tombstone_floor <= header.generation <= state.generation
    )


def _ahead(header: Header, state: State, dimension: int) -> bool:
    """Whether a file of this store is at or past ``state`` (nothing to add, never to replace)."""
    return (
        header.store_uuid == state.store_uuid
        and header.dimension == dimension
        and header.generation >= state.generation
    )


def _usable(snapshot: Snapshot | None, state: State, dimension: int) -> Snapshot | None:
    if snapshot is None or snapshot.store_uuid != state.store_uuid:
        return None
    if snapshot.matrix.shape[1:] != (dimension,):
        return None
    if not state.tombstone_floor <= snapshot.generation <= state.generation:
        return None  # older than the kept tombstones, or newer than this transaction
    return snapshot


def _snapshot_of(records: Records) -> Snapshot:
    head = records.header
    return Snapshot(
        head.store_uuid,
        head.generation,
        records.rowids,
        records.matrix,
        records.packed,
        head.ascending,
        records.mapped,
    )


def _catch_up(
    conn: sqlite3.Connection,
    state: State,
    snapshot: Snapshot,
    dimension: int,
    *,
    fold_at: int | None = None,
) -> View:
    """The view of ``state`` from ``snapshot``. When many rows changed (``fold_at``, by default
    ``REBUILD_AT`` or an eighth of the snapshot) they are folded into a new in-memory snapshot,
    so later views do not carry them as a delta."""
    if snapshot.generation == state.generation:
        return View(state, snapshot, _NONE, np.empty(0, np.int64), _empty(dimension), dimension)
    rowids, matrix, removed = changes(conn, snapshot.generation, dimension)
    limit = max(REBUILD_AT, len(snapshot) // 8) if fold_at is None else fold_at
    if len(rowids) + len(removed) > limit:
        snapshot = _fold(snapshot, state, rowids, matrix, removed)
        return View(state, snapshot, _NONE, np.empty(0, np.int64), _empty(dimension), dimension)
    gone = np.concatenate([rowids, removed])
    _, stale = snapshot.locate(np.sort(gone))
    return View(state, snapshot, stale, rowids, matrix, dimension)


def _fold(
    snapshot: Snapshot, state: State, rowids: Rowids, matrix: Matrix, removed: Rowids
) -> Snapshot:
    """``snapshot``'s live rows with the changes applied, rowids ascending, in memory."""
    records = _merged(snapshot, rowids, matrix, removed)
    return Snapshot(state.store_uuid, state.generation, records["rowid"], records["vector"])


def _merged(snapshot: Snapshot, rowids: Rowids, matrix: Matrix, removed: Rowids) -> sidefile.Packed:
    """``snapshot``'s live rows with the changes (``rowids`` ascending) applied, as records in
    rowid order, built in place: each vector is copied once, from the map or from ``matrix``."""
    kept = ~np.isin(snapshot.live_rowids, np.concatenate([rowids, removed]))
    old_rowids = snapshot.live_rowids[kept]
    where = np.flatnonzero(kept)
    old_pos = where if snapshot.live_pos is None else snapshot.live_pos[where]
    # Both lists are ascending and disjoint: a new row's slot is its rank among the old ones
    # plus the new rows before it; the old rows fill the slots left.
    new_slots = np.searchsorted(old_rowids, rowids) + np.arange(len(rowids))
    old_slots = np.ones(len(old_rowids) + len(rowids), dtype=bool)
    old_slots[new_slots] = False
    old_at = np.flatnonzero(old_slots)
    records = np.empty(len(old_slots), dtype=sidefile.record_dtype(matrix.shape[1]))
    if snapshot.packed is not None:  # whole records: a memcpy each, not a loop over floats
        records[old_at] = snapshot.packed[old_pos]
    else:
        records["rowid"][old_at] = old_rowids
        records["vector"][old_at] = snapshot.matrix[old_pos]
    records["rowid"][new_slots] = rowids
    records["vector"][new_slots] = matrix
    return records


def _empty(dimension: int) -> Matrix:
    return np.empty((0, dimension), dtype=np.float32)


def _best(rowids: Rowids, scores: Matrix, k: int) -> Best:
    """The k highest scores, ties broken by the smaller rowid (as the reference does); hidden
    rows (score -inf) never."""
    n = len(scores)
    if n == 0 or k <= 0:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64)
    if n > k:
        threshold = np.partition(scores, n - k)[n - k]
        picked = np.flatnonzero(scores >= threshold)
        rowids, scores = rowids[picked], scores[picked]
    shown = scores > -np.inf
    if not shown.all():
        rowids, scores = rowids[shown], scores[shown]
    order = np.lexsort((rowids, -scores))[:k]
    return rowids[order], np.clip(scores[order].astype(np.float64), -1.0, 1.0)
