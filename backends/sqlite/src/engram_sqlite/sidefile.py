"""The side file's format: a header, then one record per vector write, appended in order.

A 4,096-byte header (magic + JSON: format, store_uuid, generation, dimension, count, and three
hints: ``dead``, records known to be replaced, ``top``, the largest rowid, and ``ascending``, set
while every record is a live row with rowids ascending, so a reader need not scan the records to
know which are live; a file without it is scanned) is followed by ``count`` records of (int64 rowid,
float32[dimension] unit vector). A later record of a rowid replaces an earlier one; a negative rowid
``-r`` records that row ``r`` lost its vector (its vector part is zeros). Appending never moves a
byte a reader has mapped: the records are written and fsynced first, the header (with the new count
and generation) last, so a crash between the two leaves the old header, which still describes a
true, older state that readers catch up from. Bytes past the header's count are a crashed append's
leftovers; the next append cuts them off.
Appends and rewrites of one file are serialised by an ``flock`` on ``<file>.lock``.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import numpy as np
import numpy.typing as npt

FORMAT = 2
MAGIC = b"ENGRAMVM"
HEADER_BYTES = 4096

Rowids = npt.NDArray[np.int64]
Matrix = npt.NDArray[np.float32]
Packed = npt.NDArray[np.void]  # records of ``record_dtype``, as the file holds them


def record_dtype(dimension: int) -> np.dtype[np.void]:
    """One record: the rowid (negative for a removal) and the unit vector."""
    return np.dtype([("rowid", "<i8"), ("vector", "<f4", (dimension,))])


@dataclass(frozen=True)
class Header:
    store_uuid: str
    generation: int
    dimension: int
    count: int
    dead: int = 0  # records replaced or removed since, at least (when to compact)
    top: int = 0  # the largest rowid in the file
    ascending: bool = False  # every record live, rowids ascending (no scan needed to know)


@dataclass
class Records:
    """The records of one file (or of memory): rowids and unit vectors, in file order."""

    header: Header
    rowids: Rowids
    matrix: Matrix
    packed: Packed | None = None  # the records themselves (copying whole records is fastest)
    # (device, inode, end) of the file the records are mapped from: a map must not be read
    # once that file is cut below ``end`` (SIGBUS), see ``cut_below``.
    mapped: tuple[int, int, int] | None = None


def read_header(fh: BinaryIO) -> Header | None:
    """The header of an open file, or None if it is not a side file of this format or its size
    cannot hold the records it counts."""
    fh.seek(0)
    head = fh.read(HEADER_BYTES)
    if len(head) != HEADER_BYTES or not head.startswith(MAGIC):
        return None
    try:
        meta = json.loads(head[len(MAGIC) :].rstrip(b"\0 ").decode("utf-8"))
        header = Header(
            store_uuid=str(meta["store_uuid"]),
            generation=int(meta["generation"]),
            dimension=int(meta["dimension"]),
            count=int(meta["count"]),
            dead=int(meta.get("dead", 0)),
            top=int(meta.get("top", 0)),
            ascending=meta.get("ascending") is True,
        )
        if meta["format"] != FORMAT:
            return None
    except (ValueError, KeyError, TypeError, UnicodeDecodeError):
        return None
    if header.count < 0 or header.dimension < 1:
        return None
    if os.fstat(fh.fileno()).st_size < _end(header):
        return None
    return header


def header_of(path: Path) -> Header | None:
    """The file's header alone (None: missing, damaged, another format), without mapping its
    records: what a writer that only appends needs to know."""
    try:
        with path.open("rb") as fh:
            return read_header(fh)
    except OSError:
        return None


class HeaderCache:
    """``header_of`` for a writer that asks on every write: the header is read again only when
    the file's (inode, size, mtime) moved, so an unchanged file costs one ``stat``.

    A header read mid-append (between the records and the header write, within one mtime tick)
    can stay cached while the file's new header says more: the answer is then an older, true
    state, and whoever acts on it re-reads under the lock (``SideMatrix._append``). A file that
    could not be read is never cached."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._key: tuple[int, int, int] | None = None
        self._header: Header | None = None

    def __call__(self) -> Header | None:
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        key = (st.st_ino, st.st_size, st.st_mtime_ns)
        if key != self._key:
            header = header_of(self.path)
            self._key, self._header = (key if header is not None else None), header
        return self._header


def load(path: Path) -> Records | None:
    """The file as a memory map, or None if it is missing, damaged or another format. Header,
    size and map come from one open file, so a rename in between cannot mix two files."""
    try:
        with path.open("rb") as fh:
            header = read_header(fh)
            if header is None:
                return None
            st = os.fstat(fh.fileno())
            mapped = (st.st_dev, st.st_ino, _end(header))
            if header.count == 0:
                return Records(
                    header,
                    np.empty(0, dtype=np.int64),
                    np.empty((0, header.dimension), dtype=np.float32),
                )
            records = np.memmap(
                fh,
                dtype=record_dtype(header.dimension),
                mode="r",
                offset=HEADER_BYTES,
                shape=(header.count,),
            )
    except OSError:
        return None
    # Plain ndarray views of the map (the map stays alive through them): indexing a memmap
    # subclass goes through Python on every call, a cost each search paid several times.
    packed = records.view(np.ndarray)
    return Records(header, packed["rowid"], packed["vector"], packed, mapped)


def cut_below(path: Path, mapped: tuple[int, int, int]) -> bool:
    """Whether the mapped file (same device and inode) is now shorter than the records mapped
    from it: someone truncated it, and touching the map would kill the process (SIGBUS). A file
    replaced by a rewrite is another inode: the old map stays valid."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    return (st.st_dev, st.st_ino) == mapped[:2] and st.st_size < mapped[2]


def pack(rowids: Rowids, matrix: Matrix) -> Packed:
    """Records as the file holds them."""
    out = np.empty(len(rowids), dtype=record_dtype(matrix.shape[1]))
    out["rowid"] = rowids
    out["vector"] = matrix
    return out


def rewrite(path: Path, header: Header, payload: Packed) -> None:
    """Replace the whole file: a temp file, fsync, then an atomic rename."""
    tmp = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    try:
        with tmp.open("wb") as fh:
            fh.write(_header_bytes(header))
            fh.write(np.ascontiguousarray(payload).data)  # the buffer itself, no bytes copy
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def append(path: Path, old: Header, new: Header, payload: Packed) -> bool:
    """Add records after the ``old`` header's count, then write the ``new`` header. False (and
    nothing written) when the file is no longer the one ``old`` describes."""
    with path.open("r+b") as fh:
        if read_header(fh) != old:
            return False
        fh.truncate(_end(old))  # a crashed append's leftovers
        fh.seek(_end(old))
        fh.write(np.ascontiguousarray(payload).data)
        fh.flush()
        os.fsync(fh.fileno())  # the records reach the disk before a header that counts them
        fh.seek(0)
        fh.write(_header_bytes(new))
        fh.flush()
    return True


_held: dict[Path, threading.RLock] = {}
_held_guard = threading.Lock()
_depth: dict[Path, int] = {}


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock that serialises appends and rewrites of ``path``: an ``flock`` on
    ``<file>.lock`` between processes, re-entrant within this one."""
    with _held_guard:
        guard = _held.setdefault(path, threading.RLock())
    with guard:
        if _depth.get(path, 0) > 0:
            _depth[path] += 1
            try:
                yield
            finally:
                _depth[path] -= 1
            return
        with open(path.with_name(path.name + ".lock"), "a+b") as fh:
            _flock(fh, exclusive=True)
            _depth[path] = 1
            try:
                yield
            finally:
                _depth[path] = 0
                _flock(fh, exclusive=False)


def _flock(fh: BinaryIO, *, exclusive: bool) -> None:
    if sys.platform == "win32":  # no flock: SQLite's write lock still orders most writers
        return
    import fcntl

    fcntl.flock(fh.fileno(), fcntl.LOCK_EX if exclusive else fcntl.LOCK_UN)


def _end(header: Header) -> int:
    return HEADER_BYTES + header.count * record_dtype(header.dimension).itemsize


def _header_bytes(header: Header) -> bytes:
    meta = {
        "format": FORMAT,
        "store_uuid": header.store_uuid,
        "generation": header.generation,
        "dimension": header.dimension,
        "count": header.count,
        "dead": header.dead,
        "top": header.top,
        "ascending": header.ascending,
    }
    return (MAGIC + json.dumps(meta).encode("utf-8")).ljust(HEADER_BYTES, b" ")
