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
import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engram.errors import StoreError

BUSY_TIMEOUT_S = 30.0
_WAL_RETRY_S = 0.01

Migrate = Callable[[sqlite3.Connection, int], None]
"""Bring the schema from the version found (0 for a new file) to the current one; runs inside
the opening transaction."""


@dataclass(frozen=True)
class SqliteFile:
    """A versioned SQLite file: what it is called in messages, how to fix it when it cannot be
    opened, its schema version and how to migrate to it."""

    what: str
    version: int
    migrate: Migrate
    fix_unwritable: str
    fix_newer: str
    fix_broken: str
    synchronous: str = "NORMAL"

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
            db.execute("BEGIN IMMEDIATE")
            found = int(db.execute("PRAGMA user_version").fetchone()[0])
            if found > self.version:
                raise StoreError(
                    f"{self.what} {path} was written by a newer engram (schema {found}); "
                    f"{self.fix_newer}"
                )
            if found < self.version:
                self.migrate(db, found)
                db.execute(f"PRAGMA user_version = {int(self.version):d}")
            db.execute("COMMIT")
        except (sqlite3.Error, StoreError) as exc:
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            db.close()
            if isinstance(exc, StoreError):
                raise
            message = f"{self.what} {path} is unreadable ({exc}); {self.fix_broken}"
            raise StoreError(message) from None
        return db


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
