"""One SQLite connection set up for the store: pragmas, SQL functions, the plugin hook, and
transactions that are all or nothing, with SQLite errors turned into ``StoreError`` that say what
to do. A second, query-only connection on a thread of its own (``read_aside``) lets hybrid
search run its keyword half while the vector half scans.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import TypeVar

import pluggy

from engram import EngramError, IndexDamaged, IndexMoved, StoreError
from engram_sqlite.driver import DriverInfo, load_vec, select
from engram_sqlite.filters import ISO_FUNCTION, NUMBER_FUNCTION, iso_microseconds, json_number
from engram_sqlite.fts import index_text
from engram_sqlite.options import SQLiteOptions
from engram_sqlite.reader import ReadThread

WAL_CHECKPOINT_PAGES = 4096
WAL_SIZE_LIMIT = 64 * 1024 * 1024
# Pages read through a memory map instead of read() into SQLite's own cache (reads only: SQLite
# still writes with write()); a hybrid search of a 10K-chunk index ~10% faster measured.
MMAP_BYTES = 256 * 1024 * 1024
T = TypeVar("T")


class Database:
    """The store's connection. ``write()`` and ``read()`` are transactions; both hold a lock so
    one store object can be shared between threads."""

    def __init__(
        self, options: SQLiteOptions, plugin_manager: pluggy.PluginManager | None = None
    ) -> None:
        self.where = options.target()
        side = options.vectors_path()
        # What recovery moves aside when the file is damaged: the index, its WAL, its side matrix.
        self.files: tuple[Path, ...] = ()
        if not options.in_memory and side is not None:
            p = options.path
            self.files = (p, p.with_name(p.name + "-wal"), p.with_name(p.name + "-shm"), side)
        self._busy_ms = options.busy_timeout_ms
        self._path = None if options.in_memory else options.path
        # Whether this open makes the file (none was there): core rebuilds an index made anew
        # where one had been (``Memory.open``).
        self.created = self._path is not None and not self._path.exists()
        if not options.in_memory:
            _make_parent(options.path)
        self.module: ModuleType
        self.info: DriverInfo
        self.module, self.info = select(options.driver)
        try:
            self.conn: sqlite3.Connection = self.module.connect(
                self.where,
                isolation_level=None,
                check_same_thread=False,
                timeout=options.busy_timeout_ms / 1000,
            )
        except self.module.Error as exc:
            raise StoreError(
                f"cannot open the index {self.where} ({exc}); check that the path is a writable "
                "file location, or choose another [store] path"
            ) from exc
        self._lock = threading.RLock()
        self._closed = False
        # The file this connection opened, and its size as each connection last saw it: see
        # ``_fit`` (None: in memory, nothing mapped).
        self._inode = _inode(self._path)
        self._sizes: dict[int, int] = {}
        # Counts this connection's write transactions, begun and ended: SQLite's data_version
        # sees only other connections' commits (``search_rows.SearchMeta``).
        self.writes = 0
        self._plugin_manager = plugin_manager
        # An in-memory index is private to its connection: a second one would see another.
        self._aside = None if options.in_memory else ReadThread(self._open_reader)
        try:
            with self._translate():
                load_vec(self.conn)
                self._configure(options)
            _prepare(plugin_manager, self.conn)
        except BaseException:
            self.conn.close()
            raise

    @property
    def closed(self) -> bool:
        return self._closed

    @contextmanager
    def write(self) -> Iterator[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` … ``COMMIT``; any error rolls everything back."""
        with self._lock, self._translate():
            self._check_open()
            self._fit(self.conn)
            self.writes += 1
            try:
                self.conn.execute("BEGIN IMMEDIATE")
                try:
                    yield self.conn
                except BaseException:
                    if self.conn.in_transaction:
                        self.conn.execute("ROLLBACK")
                    raise
                self.conn.execute("COMMIT")
            finally:
                self.writes += 1

    @contextmanager
    def read(self) -> Iterator[sqlite3.Connection]:
        """A read transaction: several statements see one snapshot."""
        with self._lock, self._translate():
            self._check_open()
            self._fit(self.conn)
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                if self.conn.in_transaction:
                    self.conn.execute("COMMIT")

    @contextmanager
    def statement(self) -> Iterator[sqlite3.Connection]:
        """For a read that is ONE statement: SQLite runs it on one snapshot by itself, so the
        BEGIN and COMMIT of ``read()`` are two round trips saved on every search."""
        with self._lock, self._translate():
            self._check_open()
            self._fit(self.conn)
            yield self.conn

    def read_aside(self, work: Callable[[sqlite3.Connection], T]) -> Future[T] | None:
        """Run ``work`` (one read) on the second connection's thread, errors translated as
        here; None when there is no second connection (an in-memory index)."""
        if self._aside is None:
            return None
        self._check_open()
        return self._aside.submit(lambda conn: self._translated(work, conn))

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                if self._aside is not None:
                    self._aside.close()
                self.conn.close()

    def _translated(self, work: Callable[[sqlite3.Connection], T], conn: sqlite3.Connection) -> T:
        with self._translate():
            self._fit(conn)
            return work(conn)

    def _fit(self, conn: sqlite3.Connection) -> None:
        """Before a transaction of ``conn`` touches SQLite's memory map of the file: a file that
        was replaced or removed since it was opened raises ``IndexMoved`` (nothing is read from
        or written to the old one); a file that shrank is unmapped first, because reading a
        mapped page past the new end kills the process with SIGBUS, and when its own header
        says it needs more than is left it is damaged (cut off by someone) and raises
        ``IndexDamaged``. One ``stat`` a transaction."""
        if self._path is None or self._inode is None:
            return
        try:
            st = os.stat(self._path)
        except FileNotFoundError:
            raise IndexMoved(
                f"the index {self.where} was removed while it was open; it is opened again "
                "and rebuilt from the markdown files"
            ) from None
        except OSError:
            return  # unreadable folder: SQLite's own error says more
        if (st.st_dev, st.st_ino) != self._inode:
            raise IndexMoved(
                f"the index {self.where} was replaced while it was open; it is opened again"
            )
        seen = self._sizes.get(id(conn), 0)
        self._sizes[id(conn)] = st.st_size
        if st.st_size >= seen:
            return
        conn.execute("PRAGMA mmap_size = 0")  # unmaps; the next read maps the file as it is now
        conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
        if _cut_short(self._path, st.st_size):
            detail = f"the file shrank to {st.st_size} bytes, less than its header says it holds"
            raise IndexDamaged(
                f"the index {self.where} is damaged ({detail}); run `engram rebuild` (it is "
                "moved aside and rebuilt from the markdown files, the source of truth)",
                detail=detail,
                files=self.files,
            )

    def check_integrity(self) -> None:
        """``PRAGMA quick_check``: damage deeper down than the pages every command reads (a
        file that opens, but whose tables or indexes are broken) raises ``IndexDamaged``."""
        with self.statement() as conn:
            try:
                rows = conn.execute("PRAGMA quick_check").fetchall()
            except self.module.Error as exc:
                rows = [(str(exc),)]
        problems = [str(r[0]) for r in rows if str(r[0]) != "ok"]
        if problems:
            detail = f"quick_check: {problems[0]}"
            raise IndexDamaged(
                f"the index {self.where} is damaged ({detail}); run `engram rebuild` (it is "
                "moved aside and rebuilt from the markdown files, the source of truth)",
                detail=detail,
                files=self.files,
            )

    def _open_reader(self) -> sqlite3.Connection:
        """A query-only connection to the same file, set up as the main one for reading."""
        with self._translate():
            conn: sqlite3.Connection = self.module.connect(
                self.where, isolation_level=None, timeout=self._busy_ms / 1000
            )
            try:
                conn.execute(f"PRAGMA busy_timeout = {int(self._busy_ms)}")
                conn.execute("PRAGMA query_only = ON")
                conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
                load_vec(conn)
                _functions(conn)
                _prepare(self._plugin_manager, conn)
            except BaseException:
                conn.close()
                raise
        return conn

    def _configure(self, options: SQLiteOptions) -> None:
        conn = self.conn
        conn.execute(f"PRAGMA busy_timeout = {int(options.busy_timeout_ms)}")
        # 16 KiB pages for a new file (an existing one keeps its size): a 384-dim vector row is
        # 1.5 KiB, and bigger pages mean fewer WAL frames per commit and checkpoint (~20% faster
        # bulk ingest measured; reads are unaffected).
        conn.execute("PRAGMA page_size = 16384")
        conn.execute("PRAGMA foreign_keys = ON")
        if not options.in_memory:
            mode = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
            if str(mode).lower() != "wal":
                raise StoreError(
                    f"could not switch {self.where} to WAL mode (got {mode!r}); put the index on "
                    "a local disk (network file systems cannot share WAL indexes)"
                )
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.execute(f"PRAGMA mmap_size = {MMAP_BYTES}")
            # Checkpoint every 4096 pages (64 MiB at 16 KiB pages) instead of SQLite's 1000: a bulk
            # import checkpoints (and fsyncs the database) a quarter as often, ~15% faster
            # measured at 100K chunks; the WAL file is cut back to that size after a checkpoint.
            conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_CHECKPOINT_PAGES}")
            conn.execute(f"PRAGMA journal_size_limit = {WAL_SIZE_LIMIT}")
        _functions(conn)

    def _check_open(self) -> None:
        if self._closed:
            raise StoreError("the sqlite store is closed; open a new one")

    @contextmanager
    def _translate(self) -> Iterator[None]:
        try:
            yield
        except EngramError:
            raise
        except self.module.Error as exc:
            if _damaged(str(exc)):
                raise IndexDamaged(
                    f"the index {self.where} is damaged ({exc}); run `engram rebuild` (it is "
                    "moved aside and rebuilt from the markdown files, the source of truth)",
                    detail=str(exc),
                    files=self.files,
                ) from exc
            raise StoreError(self._explain(exc)) from exc
        except UnicodeEncodeError as exc:
            raise StoreError(
                f"text for {self.where} is not valid Unicode ({exc.reason} at position "
                f"{exc.start}); remove lone surrogates (often from bad decoding) and retry"
            ) from exc

    def _explain(self, exc: Exception) -> str:
        text = str(exc)
        lowered = text.lower()
        if "locked" in lowered or "busy" in lowered:
            return (
                f"the index {self.where} stayed locked by another writer for longer than "
                f"busy_timeout_ms={self._busy_ms}; retry, or raise busy_timeout_ms in [store]"
            )
        if "readonly" in lowered or "read-only" in lowered:
            return (
                f"the index {self.where} is read-only ({text}); make the file and folder writable"
            )
        return f"SQLite error on {self.where}: {text}"


def _functions(conn: sqlite3.Connection) -> None:
    """The SQL functions the schema's triggers and the filters call."""
    conn.create_function("engram_fts_text", 1, index_text, deterministic=True)
    conn.create_function(ISO_FUNCTION, 1, iso_microseconds, deterministic=True)
    conn.create_function(NUMBER_FUNCTION, 1, json_number, deterministic=True)


def _damaged(text: str) -> bool:
    lowered = text.lower()
    return "not a database" in lowered or "malformed" in lowered or "corrupt" in lowered


def _inode(path: Path | None) -> tuple[int, int] | None:
    """The (device, inode) of the open index file; None in memory or when it cannot be read."""
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def _cut_short(path: Path, size: int) -> bool:
    """Whether the file holds fewer bytes than its header's page count says (a file cut off
    by someone, not one a checkpoint shrank, which writes the header first). A header too short
    to read, or without a valid page count, says nothing."""
    if size == 0:
        return True  # an index this connection had written is never empty
    try:
        with open(path, "rb") as fh:
            head = fh.read(100)
    except OSError:
        return False
    if len(head) < 100 or not head.startswith(b"SQLite format 3\x00"):
        return True
    page_size = int.from_bytes(head[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    pages = int.from_bytes(head[28:32], "big")
    valid = head[24:28] == head[92:96]  # the page count is valid for this change counter
    return valid and pages * page_size > size


def _make_parent(path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StoreError(
            f"cannot create the folder {path.parent} for the sqlite index ({exc}); "
            "choose another [store] path or fix the permissions"
        ) from exc


def _prepare(plugin_manager: pluggy.PluginManager | None, conn: sqlite3.Connection) -> None:
    """Call ``prepare_connection`` on the store's own manager: none when built without one, and
    absent from a manager that neither loaded engram-sqlite nor holds an implementation."""
    prepare = getattr(plugin_manager.hook, "prepare_connection", None) if plugin_manager else None
    if prepare is not None:
        prepare(conn=conn, store="sqlite")
