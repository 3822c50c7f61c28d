"""The keyword index: an SQLite FTS5 table over each chunk's words, ranked by ``bm25()``.

Chroma has no keyword ranking outside its hosted service (``where_document`` filters, it does not
rank; ``Collection.search`` raises on local and single-node Chroma), so engram keeps one, derived
from the collection and kept in step with it by ``sync.py``. Words are engram's own tokenizer
(``engram.search.tokenize``, the one the reference store and hybrid search use), written to FTS5
space-separated and read back by FTS5's ``ascii`` tokenizer, which keeps every non-ASCII
character inside a token: the words FTS5 indexes are exactly engram's words. Ranking is FTS5's
BM25 (k1 = 1.2, b = 0.75, over every chunk, as in the SQLite store); the score is ``-bm25``.

The index is a cache: a file (embedded Chroma, or ``keyword_cache``) or memory. Besides the
words it records which change-log records it has applied (``seen``) and the writes that were
announced but not yet seen to land (``pending``).
"""

from __future__ import annotations

import json
import math
import sqlite3
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from engram import StoreError, tokenize
from engram_chroma.changelog import Entry

MAX_QUERY_TERMS = 256
SCHEMA = "1"  # a file written with another layout is dropped and rebuilt (it is only a cache)
TABLES = ("state", "seen", "pending", "chunks", "words")
_TABLES_SQL = """
CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS seen(record TEXT PRIMARY KEY) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS pending(
    stamp TEXT PRIMARY KEY, op TEXT NOT NULL, ids TEXT NOT NULL, at REAL NOT NULL,
    since REAL NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS chunks(rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE);
CREATE VIRTUAL TABLE IF NOT EXISTS words USING fts5(tokens, tokenize = 'ascii');
"""


def words(text: str) -> str:
    """What FTS5 indexes for ``text``: engram's tokens, space-separated."""
    return " ".join(tokenize(text))


def match_expression(query: str) -> str | None:
    """The user's raw text as an FTS5 query: each distinct word a quoted phrase, OR-joined.

    Tokens hold only letters, digits and combining marks, so nothing the user typed can act as
    FTS5 syntax; quotes are doubled all the same. None when the text has no words.
    """
    terms = list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]
    if not terms:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)


class KeywordIndex:
    """FTS5 over chunk words plus the bookkeeping of the change log; one connection, one lock."""

    def __init__(self, target: Path | None) -> None:
        location = ":memory:" if target is None else str(target)
        self.location = location
        try:
            if target is not None:
                target.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(location, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA busy_timeout = 60000")
            if target is not None:
                self._db.execute("PRAGMA journal_mode = WAL")
            self._db.executescript(_TABLES_SQL)
            if self.state("schema") != SCHEMA:
                for table in TABLES:
                    self._db.execute(f"DROP TABLE IF EXISTS {table}")
                self._db.executescript(_TABLES_SQL)
                self.set_state("schema", SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"cannot open the keyword index {location} ({exc}); it needs SQLite with FTS5 and "
                f"a writable folder: set [store] keyword_cache to another folder"
            ) from None
        self.lock = threading.RLock()

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (BEGIN IMMEDIATE: processes sharing the file take turns)."""
        with self.lock:
            try:
                self._db.execute("BEGIN IMMEDIATE")
            except sqlite3.OperationalError as exc:
                raise StoreError(
                    f"the keyword index {self.location} is busy ({exc}): another engram process "
                    f"is updating it; run the command again, or give each process its own "
                    f"[store] keyword_cache"
                ) from None
            try:
                yield
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # -- words --------------------------------------------------------------------------------

    def replace(self, chunks: Iterable[tuple[str, str]], *, fresh: bool = False) -> None:
        """Index ``(id, text)`` pairs, replacing what an id had (``fresh``: nothing had)."""
        for chunk_id, text in chunks:
            if not fresh:
                self.remove([chunk_id])
            cur = self._db.execute("INSERT INTO chunks(id) VALUES (?)", (chunk_id,))
            self._db.execute(
                "INSERT INTO words(rowid, tokens) VALUES (?, ?)", (cur.lastrowid, words(text))
            )

    def remove(self, ids: Iterable[str]) -> None:
        for chunk_id in ids:
            row = self._db.execute("SELECT rowid FROM chunks WHERE id = ?", (chunk_id,)).fetchone()
            if row is not None:
                self._db.execute("DELETE FROM words WHERE rowid = ?", (row[0],))
                self._db.execute("DELETE FROM chunks WHERE rowid = ?", (row[0],))

    def clear(self) -> None:
        for table in TABLES:
            self._db.execute(f"DELETE FROM {table}")
        self.set_state("schema", SCHEMA)

    def ceiling(self, query: str) -> float | None:
        """The sum of FTS5's ``bm25()`` idf over the query's distinct words that some chunk
        holds (``log((N - n + 0.5) / (n + 0.5))``, floored at 1e-6 as FTS5 floors it): the
        score of a chunk of average length holding each once (``engram.KeywordCeiling``)."""
        terms = list(dict.fromkeys(tokenize(query)))[:MAX_QUERY_TERMS]
        if not terms:
            return None
        total = int(self._db.execute("SELECT count(*) FROM words_docsize").fetchone()[0])
        held = [
            int(
                self._db.execute(
                    "SELECT count(*) FROM words WHERE words MATCH ?",
                    ('"' + term.replace('"', '""') + '"',),
                ).fetchone()[0]
            )
            for term in terms
        ]
        if not any(held):
            return None
        return sum(max(1e-6, math.log((total - n + 0.5) / (n + 0.5))) for n in held if n)

    def search(self, expression: str, limit: int, offset: int) -> list[tuple[str, float]]:
        """``(id, score)`` best first, ``limit`` rows after ``offset`` (``rank`` is ``bm25()``,
        negative; FTS5 sorts by it without scoring rows it can skip)."""
        rows = self._db.execute(
            "SELECT c.id, -w.rank FROM (SELECT rowid, rank FROM words WHERE words MATCH ? "
            "ORDER BY rank LIMIT ? OFFSET ?) w JOIN chunks c ON c.rowid = w.rowid "
            "ORDER BY w.rank, c.id",
            (expression, limit, offset),
        ).fetchall()
        return [(str(i), float(s)) for i, s in rows]

    # -- change-log bookkeeping ---------------------------------------------------------------

    def state(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_state(self, key: str, value: str) -> None:
        self._db.execute(
            "INSERT INTO state(key, value) VALUES (?, ?) "
            "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, value),
        )

    def seen_count(self) -> int:
        return int(self._db.execute("SELECT count(*) FROM seen").fetchone()[0])

    def unseen(self, records: Iterable[str]) -> list[str]:
        seen = {r for (r,) in self._db.execute("SELECT record FROM seen")}
        return [r for r in records if r not in seen]

    def mark_seen(self, records: Iterable[str]) -> None:
        self._db.executemany(
            "INSERT OR IGNORE INTO seen(record) VALUES (?)", [(r,) for r in records]
        )

    def pending(self) -> dict[str, tuple[Entry, float]]:
        """{stamp: (entry, first seen)} of writes that may still be landing."""
        rows = self._db.execute("SELECT stamp, op, ids, at, since FROM pending").fetchall()
        return {
            str(s): (
                Entry(str(s), "delete" if o == "delete" else "upsert", tuple(json.loads(i)), at),
                t,
            )
            for s, o, i, at, t in rows
        }

    def set_pending(self, entry: Entry, since: float) -> None:
        self._db.execute(
            "INSERT INTO pending(stamp, op, ids, at, since) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT(stamp) DO NOTHING",
            (
                entry.stamp,
                entry.op,
                json.dumps(list(entry.ids), ensure_ascii=False),
                entry.at,
                since,
            ),
        )

    def drop_pending(self, stamps: Iterable[str]) -> None:
        self._db.executemany("DELETE FROM pending WHERE stamp = ?", [(s,) for s in stamps])
