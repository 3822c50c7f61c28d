"""A derived cache of the document stamps a re-index reads first (``document_stamps``).

The stamps are ~2 µs a record to read from SQL (10K rows of five columns into Python), the
largest part of a no-op re-index after the walk and the stats. This cache keeps the answer of
the last stamps query, in memory and in a file beside the index (``<index>-stamps``), together
with the ``documents_token`` it was read under (migration 5: a trigger draws a new random
token in every transaction that changes the documents table, whoever writes it). It is
trusted only when the token in the database is still that one and the query (sources, roots,
settling time) is the same; anything else (another process wrote, the file is missing, torn,
from another format, or of another query) falls back to the SQL read, which then refreshes it.

The store's own writes keep the memory copy current instead of dropping it: inside the write
transaction, when the token before the write is the cached one, the written documents' rows
are read again with the cached query and the new token taken. The file is rewritten when the
SQL read refreshed the cache and on ``close`` after writes, as a temp file renamed over the
old one (no fsync: a torn file fails its checksum and is read from SQL again).
"""

from __future__ import annotations

import contextlib
import marshal
import os
import sqlite3
import tempfile
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engram import Stamp
from engram_sqlite.records import id_list, to_stamps

FORMAT = 2  # 2: the ctime in each stamp (engram.stamps)
MAGIC = b"ENGRAMST"
TOKEN_KEY = "documents_token"
_TOKEN = f"SELECT value FROM meta WHERE key = '{TOKEN_KEY}'"
Key = tuple[str, tuple[Any, ...]]  # the stamps query and its parameters


@dataclass
class _Cached:
    token: str
    key: Key
    stamps: dict[str, Stamp]
    saved: bool


class StampCache:
    """The stamps of one query, trusted while the documents token is unchanged; ``path`` is
    the cache file (None: memory only, for an in-memory index)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._cached: _Cached | None = None

    def current(
        self, conn: sqlite3.Connection, query: str, params: Sequence[Any]
    ) -> dict[str, Stamp] | None:
        """The cached stamps of ``query`` when the token (read by ONE statement, no
        transaction needed) says they are current, else None: ``read`` them in a transaction
        (the SQL read and the token it is kept under must see one snapshot)."""
        token = _token(conn)
        key: Key = (query, tuple(params))
        cached = self._cached
        if token is None:
            return None
        if cached is None or (cached.token, cached.key) != (token, key):
            cached = self._load(token, key)
            if cached is None:
                return None
            self._cached = cached
        return dict(cached.stamps)  # the caller's to keep; the cache stays as read

    def read(self, conn: sqlite3.Connection, query: str, params: Sequence[Any]) -> dict[str, Stamp]:
        """The stamps of ``query`` (call inside one read transaction): from the cache when
        the token says it is current, else from SQL (and the cache refreshed)."""
        token = _token(conn)
        key: Key = (query, tuple(params))
        cached = self._cached
        if token is not None and (cached is None or (cached.token, cached.key) != (token, key)):
            cached = self._load(token, key)
        if token is None or cached is None:
            stamps = to_stamps(conn.execute(query, list(params)).fetchall())
            if token is None:  # no token to vouch for a cache: never keep one
                self._cached = None
                return stamps
            cached = _Cached(token, key, stamps, saved=False)
            self._save(cached)
        self._cached = cached
        return dict(cached.stamps)  # the caller's to keep; the cache stays as read

    def before_write(
        self, conn: sqlite3.Connection, meta: dict[str, Any] | None = None
    ) -> str | None:
        """The token at the start of a write transaction (None when nothing is cached); from
        ``meta`` (the ``meta`` rows by key) when the writer has just read them."""
        if self._cached is None:
            return None
        if meta is None:
            return _token(conn)
        token = meta.get(TOKEN_KEY)
        return token if isinstance(token, str) else None

    def written(self, conn: sqlite3.Connection, before: str | None, ids: Sequence[str]) -> None:
        """After the write of the documents ``ids`` (same transaction, before its commit):
        bring the memory copy up to date, or drop it when someone else wrote since it was
        read."""
        cached = self._cached
        if cached is None:
            return
        if before is None or before != cached.token:
            self._cached = None
            return
        query, params = cached.key
        # The new token and the written rows in one statement: the token's row, joined with
        # the rows (none: one row of NULLs beside the token).
        found = conn.execute(
            f"SELECT m.value, s.* FROM meta m LEFT JOIN ({query} AND id IN "
            f"(SELECT value FROM json_each(?))) s WHERE m.key = '{TOKEN_KEY}'",
            [*params, id_list(ids)],
        ).fetchall()
        after = found[0][0] if found else None
        if not isinstance(after, str):
            self._cached = None
            return
        for doc_id in ids:
            cached.stamps.pop(doc_id, None)
        cached.stamps.update(to_stamps([row[1:] for row in found if row[6] is not None]))
        cached.token = after
        cached.saved = False

    def forget(self) -> None:
        self._cached = None

    def flush(self) -> None:
        """Write the memory copy to the file when writes changed it since it was saved."""
        if self._cached is not None and not self._cached.saved:
            self._save(self._cached)

    def _load(self, token: str, key: Key) -> _Cached | None:
        """The file's stamps when it holds those of ``key`` under ``token``, intact."""
        if self.path is None:
            return None
        try:
            data = memoryview(self.path.read_bytes())
            start = len(MAGIC) + 4
            end = start + int.from_bytes(data[len(MAGIC) : start], "little")
            if data[: len(MAGIC)] != MAGIC or marshal.loads(data[start:end]) != (
                FORMAT,
                token,
                key,
            ):
                return None
            crc, payload = int.from_bytes(data[end : end + 4], "little"), data[end + 4 :]
            stamps = marshal.loads(payload) if zlib.crc32(payload) == crc else None
        except (OSError, EOFError, ValueError, TypeError):  # missing, torn, another format
            return None
        return _Cached(token, key, stamps, saved=True) if isinstance(stamps, dict) else None

    def _save(self, cached: _Cached) -> None:
        """Replace the file (a cache: when it cannot be written, the next run reads SQL).
        Layout: magic, header length, header (format, token, key), checksum, stamps."""
        if self.path is None:
            return
        header = marshal.dumps((FORMAT, cached.token, cached.key))
        payload = marshal.dumps(cached.stamps)
        data = b"".join(
            [
                MAGIC,
                len(header).to_bytes(4, "little"),
                header,
                zlib.crc32(payload).to_bytes(4, "little"),
                payload,
            ]
        )
        try:
            fd, temp = tempfile.mkstemp(prefix=self.path.name + ".", dir=self.path.parent)
        except OSError:
            return
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(temp, self.path)
            cached.saved = True
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(temp)


def _token(conn: sqlite3.Connection) -> str | None:
    row = conn.execute(_TOKEN).fetchone()
    return row[0] if row is not None and isinstance(row[0], str) else None
