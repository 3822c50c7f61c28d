"""A second read connection on a thread of its own: hybrid search runs its FTS5 query there
while the caller's thread scans the side matrix with numpy. Both release the GIL, so on two
cores the halves overlap instead of adding up.

The connection is opened, used and closed on that one thread only (SQLite connections are not
shared between threads here); ``close`` ends the thread and its connection with the store.
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TypeVar

T = TypeVar("T")


class ReadThread:
    """One worker thread owning one connection, opened on first use by ``open_connection``."""

    def __init__(self, open_connection: Callable[[], sqlite3.Connection]) -> None:
        self._open = open_connection
        self._guard = threading.Lock()
        self._pool: ThreadPoolExecutor | None = None
        self._conn: sqlite3.Connection | None = None  # touched on the worker thread only
        self._closed = False

    def submit(self, work: Callable[[sqlite3.Connection], T]) -> Future[T]:
        """Run ``work`` with the thread's connection; its result or error comes back through
        the future."""
        with self._guard:
            if self._closed:
                raise RuntimeError("the read thread is closed")
            if self._pool is None:
                self._pool = ThreadPoolExecutor(1, thread_name_prefix="engram-sqlite-read")
            return self._pool.submit(self._run, work)

    def close(self) -> None:
        """Close the connection on its own thread, then end the thread (waits for queued work)."""
        with self._guard:
            self._closed = True
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.submit(self._close_connection)
            pool.shutdown(wait=True)

    def _run(self, work: Callable[[sqlite3.Connection], T]) -> T:
        if self._conn is None:
            self._conn = self._open()
        return work(self._conn)

    def _close_connection(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
