"""OpenCode 1.2+ keeps every session in one SQLite database, ``opencode.db`` (WAL mode), with
the tables of its drizzle schema (``packages/opencode/src/session/session.sql.ts``)::

    session (id, project_id, parent_id, directory, title, time_created, time_updated, …)
    message (id, session_id, time_created, time_updated, data)   data: JSON {role, time, …}
    part    (id, message_id, session_id, time_created, time_updated, data)
                                                                 data: JSON {type, text, …}

OpenCode hydrates a session the same way we read it: its messages by (time_created, id), each
message's parts by id. We open the database read-only (URI ``mode=ro``) with a busy timeout and
keep every read short (one statement for discovery, one read transaction per session), so
OpenCode's own writer is never held up and we never see half of a write.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engram.hosts.opencode.sessions_tree import parts_text
from engram.ingest.sessions.base import (
    SAFE_ID,
    SessionRef,
    Transcript,
    TranscriptError,
    Turn,
    clean_text,
    fingerprint,
    in_project,
    iso_from_millis,
)

AGENT = "opencode"
DB_NAME = "opencode.db"
BUSY_TIMEOUT_MS = 2000


class OpenCodeDatabase:
    """Sessions of one ``opencode.db`` (``project``: only sessions run inside that folder)."""

    agent = AGENT

    def __init__(self, path: Path, project: Path | None = None) -> None:
        self.path = path
        self.root = path.parent
        self.project = project

    def discover(self) -> tuple[list[SessionRef], list[str]]:
        try:
            with _connect(self.path) as db:
                rows = db.execute(_discovery_sql(db)).fetchall()
        except sqlite3.Error as exc:
            return [], [f"opencode: cannot read {self.path} ({exc}); its sessions were skipped"]
        refs: list[SessionRef] = []
        warnings: list[str] = []
        for session_id, directory, updated, messages, parts in rows:
            if not isinstance(session_id, str) or not SAFE_ID.match(session_id):
                warnings.append(f"opencode: session id {str(session_id)[:40]!r} is not usable")
                continue
            folder = directory if isinstance(directory, str) else None
            if not in_project(folder, self.project):
                continue
            mark = fingerprint(
                [(session_id, int(updated or 0), 0), (messages, 0, 0), (parts, 0, 0)]
            )
            refs.append(SessionRef(AGENT, session_id, self.path, mark, folder))
        return refs, warnings

    def load(self, ref: SessionRef) -> Transcript:
        transcript = Transcript(agent=AGENT, session_id=ref.session_id)
        try:
            with _connect(self.path) as db:
                db.execute("BEGIN")  # one snapshot: messages and parts from the same moment
                info = db.execute(
                    f"SELECT title, {_directory_column(db)} FROM session WHERE id = ?",
                    (ref.session_id,),
                ).fetchone()
                messages = db.execute(
                    "SELECT id, time_created, data FROM message WHERE session_id = ? "
                    "ORDER BY time_created, id",
                    (ref.session_id,),
                ).fetchall()
                parts = db.execute(
                    "SELECT message_id, data FROM part WHERE session_id = ? "
                    "ORDER BY message_id, id",
                    (ref.session_id,),
                ).fetchall()
                db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise TranscriptError(f"cannot read opencode session {ref.session_id}: {exc}") from None
        if info is None:
            raise TranscriptError(f"opencode session {ref.session_id} no longer exists")
        title, directory = info
        transcript.title = (clean_text(title) or None) if isinstance(title, str) else None
        transcript.project = directory if isinstance(directory, str) else None
        by_message: dict[str, list[dict[str, Any]]] = {}
        for message_id, data in parts:
            part = _json(data, transcript, f"a part of {message_id}")
            if part is not None:
                by_message.setdefault(message_id, []).append(part)
        for message_id, created, data in messages:
            message = _json(data, transcript, f"message {message_id}")
            role = message.get("role") if message else None
            if role not in ("user", "assistant"):
                continue
            text = parts_text(by_message.get(message_id, []))
            if text:
                transcript.turns.append(Turn(role, text, iso_from_millis(created), message_id))
        return transcript


@contextlib.contextmanager
def _connect(path: Path) -> Iterator[sqlite3.Connection]:
    """A read-only connection (never creates or changes the file), closed after use."""
    db = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro",
        uri=True,
        timeout=BUSY_TIMEOUT_MS / 1000,
        isolation_level=None,
        check_same_thread=False,
    )
    try:
        db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        yield db
    finally:
        db.close()


def _columns(db: sqlite3.Connection, table: str) -> set[str]:
    return {row[1] for row in db.execute("SELECT * FROM pragma_table_info(?)", (table,))}


def _directory_column(db: sqlite3.Connection) -> str:
    """Where a session ran: its ``directory``, or (schemas without it) its project's worktree."""
    if "directory" in _columns(db, "session"):
        return "directory"
    if "worktree" in _columns(db, "project"):
        return "(SELECT worktree FROM project WHERE project.id = session.project_id)"
    return "NULL"


def _discovery_sql(db: sqlite3.Connection) -> str:
    """Every session with what changes when it grows (counts and newest update times)."""
    return (
        f"SELECT id, {_directory_column(db)}, time_updated, "
        "(SELECT count(*) || ':' || ifnull(max(m.time_updated), 0) FROM message m "
        " WHERE m.session_id = session.id), "
        "(SELECT count(*) || ':' || ifnull(max(p.time_updated), 0) FROM part p "
        " WHERE p.session_id = session.id) "
        "FROM session ORDER BY id"
    )


def _json(data: object, transcript: Transcript, what: str) -> dict[str, Any] | None:
    try:
        value = json.loads(data) if isinstance(data, str | bytes) else None
    except ValueError:
        value = None
    if not isinstance(value, dict):
        transcript.warnings.append(f"opencode: {what} of {transcript.session_id} is not JSON")
        return None
    return value
