"""A small SQLite file engram keeps in a memory folder's ``.engram/`` (access counts, the
capture log): opened on first use, one connection behind a lock, a ``.gitignore`` so the
statistics stay out of version control when the memory folder is a repository."""

from __future__ import annotations

import os
import sqlite3
import threading
from pathlib import Path
from types import TracebackType
from typing import ClassVar, Self

from engram.sqlite_file import SqliteFile

SIDE_FOLDER = ".engram"
_IGNORE = "# engram's bookkeeping for this memory folder: not for version control\n*\n"


class Sidecar:
    """Base of a side file: subclasses set ``file`` (schema) and ``name`` (file name)."""

    file: ClassVar[SqliteFile]
    name: ClassVar[str]

    def __init__(self, folder: Path) -> None:
        self.path = folder / SIDE_FOLDER / self.name
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._pid = 0

    def _connect(self) -> sqlite3.Connection:
        """The connection (call with ``_lock`` held); a forked child opens its own."""
        if self._db is not None and self._pid == os.getpid():
            return self._db
        ignore = self.path.parent / ".gitignore"
        if not ignore.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore.write_text(_IGNORE, encoding="utf-8")
        self._db, self._pid = self.file.open(self.path), os.getpid()
        return self._db

    def close(self) -> None:
        with self._lock:
            if self._db is not None and self._pid == os.getpid():
                self._db.close()
            self._db = None

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
