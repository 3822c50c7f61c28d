"""A small SQLite file engram keeps in a memory folder's ``.engram/`` (access counts, the
capture log; the write lock lives there too), with a ``.gitignore`` so the statistics stay out
of version control when the memory folder is a repository."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from engram.dbfiles.sqlite import SqliteHandle

ENGRAM_DIR = ".engram"
_IGNORE = "# engram's bookkeeping for this memory folder: not for version control\n*\n"


class FolderFile(SqliteHandle):
    """Base of a memory folder's SQLite file: subclasses set ``file`` (schema) and ``name`` (file
    name)."""

    name: ClassVar[str]

    def __init__(self, folder: Path) -> None:
        super().__init__(folder / ENGRAM_DIR / self.name)

    def _before_open(self) -> None:
        ensure_engram_dir(self.path.parent)


def ensure_engram_dir(side: Path) -> None:
    """Create a memory folder's ``.engram/`` with its ``.gitignore`` (the write lock and the
    folder files live there)."""
    ignore = side / ".gitignore"
    if not ignore.exists():
        side.mkdir(parents=True, exist_ok=True)
        ignore.write_text(_IGNORE, encoding="utf-8")
