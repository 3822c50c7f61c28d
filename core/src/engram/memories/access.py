"""How often and how lately each memory was found: ``access_count`` and ``last_accessed_at``.

Kept in a small folder file, ``<memory folder>/.engram/access.sqlite``, keyed by memory id, not in
the memory's frontmatter, because a search is a read: rewriting markdown files on every search
hit would re-index them on each query, wake file watchers, fill version control with noise and
race with a person editing the file. Access counts are usage statistics, not knowledge; the
folder file lives beside the markdown (not in the index), so ``engram rebuild`` keeps it, and a
memory keeps its counts when its file is renamed. ``importance`` stays in the frontmatter: it is
a judgement about the memory. External folders are never written, so their memories are not
counted.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from engram.dbfiles.folder import FolderFile
from engram.dbfiles.sqlite import SqliteFile, write_transaction
from engram.memories.scopes import MemoryFolder, folder_of
from engram.models import Hit

log = logging.getLogger(__name__)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS access (
    memory_id TEXT PRIMARY KEY,
    count     INTEGER NOT NULL,
    last_at   REAL    NOT NULL
) WITHOUT ROWID
"""


ACCESS_FILE = SqliteFile(
    what="the memory access log",
    steps=(_SCHEMA,),
    fix_unwritable="check the memory folder is writable",
    fix_newer="upgrade engram, or delete the file (only access counts are lost)",
    fix_broken="delete the file; only access counts are lost",
)


@dataclass(frozen=True, slots=True)
class Access:
    count: int
    last_at: float


class AccessLog(FolderFile):
    """The access counts of one memory folder; safe across threads and processes (WAL, one
    short transaction per bump)."""

    file = ACCESS_FILE
    name = "access.sqlite"

    def bump(self, memory_ids: Iterable[str], at: float) -> None:
        """Count one access of each memory (an id given twice counts once)."""
        rows = [(i, at) for i in dict.fromkeys(memory_ids)]
        if not rows:
            return
        with self._connection("write") as db, write_transaction(db):
            db.executemany(
                "INSERT INTO access (memory_id, count, last_at) VALUES (?, 1, ?) "
                "ON CONFLICT (memory_id) DO UPDATE SET count = count + 1, "
                "last_at = MAX(last_at, excluded.last_at)",
                rows,
            )

    def absorb(self, memory_id: str, count: int, last_at: float) -> None:
        """Take counts from elsewhere (an import): the larger count and the later time win, so
        importing the same export twice changes nothing."""
        with self._connection("write") as db, write_transaction(db):
            db.execute(
                "INSERT INTO access (memory_id, count, last_at) VALUES (?, ?, ?) "
                "ON CONFLICT (memory_id) DO UPDATE SET count = MAX(count, excluded.count), "
                "last_at = MAX(last_at, excluded.last_at)",
                (memory_id, count, last_at),
            )

    def read(self, memory_ids: Sequence[str] | None = None) -> dict[str, Access]:
        """Counts of ``memory_ids`` (all when None); a folder never searched has none."""
        if not self.path.exists():
            return {}
        with self._lock:
            rows = self._connect().execute("SELECT memory_id, count, last_at FROM access")
            found = rows.fetchall()
        wanted = None if memory_ids is None else set(memory_ids)
        return {
            str(i): Access(int(c), float(t)) for i, c, t in found if wanted is None or i in wanted
        }

    def forget(self, memory_ids: Iterable[str]) -> None:
        ids = [(i,) for i in memory_ids]
        if not ids or not self.path.exists():
            return
        with self._lock:
            self._connect().executemany("DELETE FROM access WHERE memory_id = ?", ids)


class AccessCounter:
    """The access logs of every writable memory folder, opened on first use. Recording never
    fails the search or recall that triggered it: a log that cannot be written is a logged
    warning."""

    def __init__(self, folders: Sequence[MemoryFolder], project_root: Path) -> None:
        self.folders = [f for f in folders if f.writable]
        self.root = project_root
        self._logs: dict[Path, AccessLog] = {}

    def log(self, folder: MemoryFolder) -> AccessLog:
        if folder.path not in self._logs:
            self._logs[folder.path] = AccessLog(folder.path)
        return self._logs[folder.path]

    def record(self, memories: Iterable[tuple[str, str]]) -> None:
        """Count one access of each (document id, memory id) in its folder's log."""
        by_folder: dict[Path, list[str]] = {}
        for document_id, memory_id in memories:
            path = Path(document_id)
            folder = folder_of(
                self.folders, (path if path.is_absolute() else self.root / path).resolve()
            )
            if folder is not None:
                by_folder.setdefault(folder.path, []).append(memory_id)
        now = time.time()
        for folder in self.folders:
            ids = by_folder.get(folder.path)
            if not ids:
                continue
            try:
                self.log(folder).bump(ids, now)
            except Exception as exc:  # statistics must never break a search
                log.warning("access counts not recorded in %s: %s", folder.path, exc)

    def record_hits(self, hits: Iterable[Hit]) -> None:
        """Count the memories among search hits (chunks of a writable memory folder)."""
        self.record(
            (hit.chunk.document_id, memory_id)
            for hit in hits
            if hit.chunk.metadata.get("memory_scope") in ("project", "user")
            and isinstance(memory_id := hit.chunk.metadata.get("id"), str)
        )

    def forget(self, path: Path, memory_ids: Sequence[str]) -> None:
        folder = folder_of(self.folders, path.resolve())
        if folder is None:
            return
        try:
            self.log(folder).forget(memory_ids)
        except Exception as exc:
            log.warning("access counts of %s not removed: %s", list(memory_ids), exc)

    def read(self, folder: MemoryFolder) -> dict[str, Access]:
        return self.log(folder).read() if folder.writable else {}

    def close(self) -> None:
        for access_log in self._logs.values():
            access_log.close()
