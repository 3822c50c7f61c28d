"""The usage ledger: a local SQLite file (default ``.engram/usage.sqlite``) with one row per HTTP
request an API client sent, failed ones and retries included: provider, model, tokens,
estimated cost, latency and a short error label. ``engram usage`` summarises it. API keys are
never written to it: rows hold only labels built by engram, never a server's message."""

from __future__ import annotations

import contextlib
import logging
import sqlite3
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Literal, get_args
from urllib.parse import quote

from pydantic import BaseModel

from engram.config import EngramConfig
from engram.dbfiles.sqlite import SqliteFile, SqliteHandle
from engram.errors import ConfigError, StoreError

log = logging.getLogger(__name__)

DEFAULT_LEDGER_PATH = Path(".engram/usage.sqlite")

GroupBy = Literal["day", "provider", "model", "operation"]
GROUPS: tuple[GroupBy, ...] = get_args(GroupBy)
# Fixed SQL for each grouping key: user input only ever selects among these, never adds to them.
_GROUP_SQL: dict[str, str] = {
    "day": "strftime('%Y-%m-%d', at, 'unixepoch')",
    "provider": "provider",
    "model": "model",
    "operation": "operation",
}

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS requests (
    id           INTEGER PRIMARY KEY,
    at           REAL    NOT NULL,
    provider     TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    input_tokens INTEGER NOT NULL,
    requests     INTEGER NOT NULL,
    cost_usd     REAL,
    latency_ms   REAL    NOT NULL,
    error        TEXT
);
CREATE INDEX IF NOT EXISTS requests_at ON requests (at);
"""
# Version 2: chat models (extraction) bill output tokens too, and a row says what it was for.
_SCHEMA_V2 = """
ALTER TABLE requests ADD COLUMN operation TEXT NOT NULL DEFAULT 'embed';
ALTER TABLE requests ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
"""


LEDGER_FILE = SqliteFile(
    what="the usage ledger",
    steps=(_SCHEMA_V1, _SCHEMA_V2),
    fix_unwritable="check the folder is writable, or set the ledger_path option to another file",
    fix_newer="upgrade engram, or move the file away to start a new ledger",
    fix_broken="move it away and a new one is started",
)


class UsageRow(BaseModel):
    """One line of ``engram usage``: totals for a day / provider / model (``None`` = all)."""

    day: str | None = None
    provider: str | None = None
    model: str | None = None
    operation: str | None = None
    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    unpriced_requests: int = 0
    avg_latency_ms: float | None = None


class UsageRequest(BaseModel):
    """One request of the ledger as it was recorded (the dashboard's recent activity)."""

    at: float
    provider: str
    model: str
    operation: str
    input_tokens: int
    output_tokens: int
    requests: int
    cost_usd: float | None
    latency_ms: float
    error: str | None


def ledger_path(config: EngramConfig) -> Path:
    """Where the configured embedder records its requests: its ``ledger_path`` option, else the
    default file, relative to the project root."""
    raw = config.embedder.options().get("ledger_path")
    return config.resolve(str(raw) if raw else DEFAULT_LEDGER_PATH)


class UsageLedger(SqliteHandle):
    """One SQLite file of API requests, created on first write.

    Safe for several threads (one connection behind a lock) and several processes (WAL mode,
    busy timeout, one short transaction per row). A ledger that cannot be written never stops
    embedding: the failure is logged once and the request goes on unrecorded.
    """

    file = LEDGER_FILE

    def __init__(self, path: Path | str) -> None:
        super().__init__(path)
        self.write_errors = 0

    def record(
        self,
        provider: str,
        model: str,
        input_tokens: int,
        requests: int = 1,
        cost_usd: float | None = None,
        latency_ms: float = 0.0,
        error: str | None = None,
        *,
        at: float | None = None,
        operation: str = "embed",
        output_tokens: int = 0,
    ) -> None:
        """Append one row; ``error`` is a short label (``HTTP 429``), never a server message.
        ``operation`` says what the request was for: embed, extract, contradict, condense."""
        row = (
            time.time() if at is None else at,
            provider,
            model,
            int(input_tokens),
            int(requests),
            cost_usd,
            float(latency_ms),
            error,
            operation,
            int(output_tokens),
        )
        with self._lock:
            try:
                db = self._connect()
                db.execute(
                    "INSERT INTO requests (at, provider, model, input_tokens, requests, cost_usd, "
                    "latency_ms, error, operation, output_tokens) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except (StoreError, sqlite3.Error) as exc:
                self.write_errors += 1
                if self.write_errors == 1:
                    log.warning("usage ledger %s not written (requests go on): %s", self.path, exc)

    def _check_is_ledger(self) -> None:
        """Refuse, before opening it for real, a file that is not a ledger: reading (``engram
        usage --ledger FILE`` names any file) must never turn a file into one or change it."""
        uri = f"file:{quote(str(self.path.resolve()))}?mode=ro"
        try:
            with contextlib.closing(sqlite3.connect(uri, uri=True, timeout=1.0)) as db:
                found = db.execute(
                    "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'requests'"
                ).fetchone()
                # A newer engram's ledger: the open refuses it with its own words, unchanged.
                newer = int(db.execute("PRAGMA user_version").fetchone()[0]) > self.file.version
                found = found or (1 if newer else None)
        except sqlite3.Error as exc:
            found, detail = None, str(exc)
        else:
            detail = "it has no requests table"
        if found is None:
            raise StoreError(
                f"{self.path} is not a usage ledger ({detail}); nothing was changed. Pass a "
                f"ledger engram wrote (default {DEFAULT_LEDGER_PATH}), or leave out --ledger"
            )

    def recent(self, limit: int = 50) -> list[UsageRequest]:
        """The newest ``limit`` requests, newest first (none when the file does not exist)."""
        if not self.path.exists():
            return []
        self._check_is_ledger()
        with self._connection("read") as db:
            rows = db.execute(
                "SELECT at, provider, model, operation, input_tokens, output_tokens, requests, "
                "cost_usd, latency_ms, error FROM requests ORDER BY at DESC LIMIT ?",
                (int(limit),),
            ).fetchall()
        fields = list(UsageRequest.model_fields)
        return [UsageRequest(**dict(zip(fields, row, strict=True))) for row in rows]

    def summary(
        self, group_by: Sequence[GroupBy] = GROUPS, since: float | None = None
    ) -> list[UsageRow]:
        """Totals per group (``day`` is the UTC date), oldest day first; ``since`` is a Unix
        time. No groups gives one row of totals. A ledger file that does not exist is empty."""
        for key in group_by:
            if key not in _GROUP_SQL:
                raise ConfigError(f"cannot group usage by {key!r}; use any of {', '.join(GROUPS)}")
        keys = list(dict.fromkeys(group_by))
        if not self.path.exists():
            return [UsageRow()] if not keys else []
        self._check_is_ledger()
        columns = [f"{_GROUP_SQL[k]} AS {k}" for k in keys]
        sql = (
            "SELECT "
            + ", ".join(
                [
                    *columns,
                    "COALESCE(SUM(requests), 0)",
                    "COALESCE(SUM(CASE WHEN error IS NULL THEN 0 ELSE requests END), 0)",
                    "COALESCE(SUM(input_tokens), 0)",
                    "COALESCE(SUM(output_tokens), 0)",
                    "SUM(cost_usd)",
                    "COALESCE(SUM(CASE WHEN cost_usd IS NULL THEN requests ELSE 0 END), 0)",
                    "AVG(latency_ms)",
                ]
            )
            + " FROM requests WHERE at >= ?"
        )
        if keys:
            order = ", ".join(keys)
            sql += f" GROUP BY {order} ORDER BY {order}"
        with self._connection("read") as db:
            rows = db.execute(sql, (since or 0.0,)).fetchall()
        out = []
        for row in rows:
            named = dict(zip(keys, row[: len(keys)], strict=True))
            requests, errors, tokens, out_tokens, cost, unpriced, latency = row[len(keys) :]
            out.append(
                UsageRow(
                    **named,
                    requests=requests,
                    errors=errors,
                    input_tokens=tokens,
                    output_tokens=out_tokens,
                    cost_usd=cost,
                    unpriced_requests=unpriced,
                    avg_latency_ms=latency,
                )
            )
        return out
