"""One way to open a small SQLite file that engram keeps beside the index (the embedding cache,
the usage ledger, the memory folders' access log): created on first use, WAL mode, a schema
version in ``PRAGMA user_version`` migrated forward, safe for several threads and processes.

Two things SQLite does not do for us, done here once:

- ``PRAGMA journal_mode=WAL`` needs an exclusive lock and does not wait on the busy timeout:
  two processes opening a new file at the same moment would see "database is locked". It is
  retried until the timeout instead.
- The version is read and the schema migrated inside one ``BEGIN IMMEDIATE`` transaction, so
  two openers never both migrate, and neither sees a half-made schema.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from engram.closing import ClosingStore
from engram.errors import StoreError

BUSY_TIMEOUT_S = 30.0
_WAL_RETRY_S = 0.01


@dataclass(frozen=True)
class SqliteFile:
    """A versioned SQLite file: what it is called in messages, how to fix it when it cannot be
    opened, and its schema as steps: ``steps[n]`` takes version ``n`` to ``n + 1`` (statements
    separated by ``;``), so the schema version is ``len(steps)``."""

    what: str
    steps: tuple[str, ...]
    fix_unwritable: str
    fix_newer: str
    fix_broken: str
    synchronous: str = "NORMAL"

    @property
    def version(self) -> int:
        return len(self.steps)

    def migrate(self, db: sqlite3.Connection, found: int) -> None:
        for script in self.steps[found:]:
            for statement in script.split(";"):
                if statement.strip():
                    db.execute(statement)

    def open(self, path: Path, *, timeout: float = BUSY_TIMEOUT_S) -> sqlite3.Connection:
        """A connection in autocommit mode (``isolation_level=None``), usable from any thread
        behind the caller's lock. Raises ``StoreError`` whose message says how to fix it."""
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(
                path, timeout=timeout, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            message = f"cannot open {self.what} {path}: {exc}; {self.fix_unwritable}"
            raise StoreError(message) from None
        try:
            _enable_wal(db, timeout)
            db.execute(f"PRAGMA synchronous={self.synchronous}")
            with write_transaction(db):
                self._upgrade(db, path)
        except (sqlite3.Error, StoreError) as exc:
            db.close()
            if isinstance(exc, StoreError):
                raise
            message = f"{self.what} {path} is unreadable ({exc}); {self.fix_broken}"
            raise StoreError(message) from None
        return db

    def _upgrade(self, db: sqlite3.Connection, path: Path) -> None:
        """Migrate an older schema forward; refuse one from a newer engram."""
        found = int(db.execute("PRAGMA user_version").fetchone()[0])
        if found > self.version:
            raise StoreError(
                f"{self.what} {path} was written by a newer engram (schema {found}); "
                f"{self.fix_newer}"
            )
        if found < self.version:
            self.migrate(db, found)
            db.execute(f"PRAGMA user_version = {int(self.version):d}")


@contextlib.contextmanager
def write_transaction(db: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` on an autocommit connection: all or nothing, rolled
    back when anything inside (or the commit itself) fails, and the error raised again."""
    db.execute("BEGIN IMMEDIATE")
    try:
        yield db
        db.execute("COMMIT")
    except BaseException:
        if db.in_transaction:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
        raise


def _enable_wal(db: sqlite3.Connection, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise
            if time.monotonic() > deadline:
                raise
            time.sleep(_WAL_RETRY_S)


class SqliteHandle(ClosingStore):
    """Base of a class over one ``SqliteFile``: the connection is opened on first use, shared
    by threads behind ``_lock``, reopened in a forked child, and closed by ``close()`` or a
    ``with`` block. Subclasses set ``file`` and call ``_connect()`` with ``_lock`` held."""

    file: ClassVar[SqliteFile]

    def __init__(self, path: Path | str, *, timeout: float = BUSY_TIMEOUT_S) -> None:
        self.path = Path(path)
        self._timeout = timeout
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0

    def _before_open(self) -> None:
        """Called before the file is first opened in a process (create what goes with it)."""

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None and self._pid == os.getpid():
            return self._db
        self._before_open()
        self._db, self._pid = self.file.open(self.path, timeout=self._timeout), os.getpid()
        return self._db

    @contextlib.contextmanager
    def _connection(self, action: str) -> Iterator[sqlite3.Connection]:
        """The connection with ``_lock`` held; a SQLite error inside becomes this file's
        ``StoreError`` (``action`` is "read" or "write")."""
        with self._lock:
            db = self._connect()
            try:
                yield db
            except sqlite3.Error as exc:
                raise self._failed(action, exc) from None

    def _failed(self, action: str, exc: sqlite3.Error) -> StoreError:
        """The error for a read or write that failed: what, where, and how to fix it."""
        return StoreError(
            f"cannot {action} {self.file.what} {self.path}: {exc}; if another process holds it "
            f"for long, retry; if the file is damaged, {self.file.fix_broken}"
        )

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None
