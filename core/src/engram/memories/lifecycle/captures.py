"""The capture log: how many turns of each session were captured, and when, so
``engram sessions --capture`` captures a session once per growth. Kept in the project memory
folder's ``.engram/captures.sqlite``: lost, it only means sessions are captured again, and
write-time dedup merges what was already remembered."""

from __future__ import annotations

from dataclasses import dataclass

from engram.dbfiles.folder import FolderFile
from engram.dbfiles.sqlite import SqliteFile

_SCHEMA = """
CREATE TABLE IF NOT EXISTS captures (
    document_id TEXT PRIMARY KEY,
    turns       INTEGER NOT NULL,
    at          REAL    NOT NULL
) WITHOUT ROWID
"""


CAPTURES_FILE = SqliteFile(
    what="the capture log",
    steps=(_SCHEMA,),
    fix_unwritable="check the memory folder is writable",
    fix_newer="upgrade engram, or delete the file (sessions are then captured again)",
    fix_broken="delete the file; sessions are then captured again",
)


@dataclass(frozen=True, slots=True)
class Captured:
    turns: int
    at: float


class CaptureLog(FolderFile):
    file = CAPTURES_FILE
    name = "captures.sqlite"

    def read(self) -> dict[str, Captured]:
        if not self.path.exists():
            return {}
        with self._lock:
            rows = self._connect().execute("SELECT document_id, turns, at FROM captures")
            return {str(d): Captured(int(t), float(a)) for d, t, a in rows.fetchall()}

    def record(self, document_id: str, turns: int, at: float) -> None:
        """Written only after a capture that worked (a failed one must be retried)."""
        with self._lock:
            self._connect().execute(
                "INSERT INTO captures (document_id, turns, at) VALUES (?, ?, ?) "
                "ON CONFLICT (document_id) DO UPDATE SET turns = excluded.turns, at = excluded.at",
                (document_id, turns, at),
            )
