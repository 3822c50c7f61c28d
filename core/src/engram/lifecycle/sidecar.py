"""A small SQLite file engram keeps in a memory folder's ``.engram/`` (access counts, the
capture log), with a ``.gitignore`` so the statistics stay out of version control when the
memory folder is a repository."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from engram.sqlite_file import SqliteHandle

SIDE_FOLDER = ".engram"
_IGNORE = "# engram's bookkeeping for this memory folder: not for version control\n*\n"


class Sidecar(SqliteHandle):
    """Base of a side file: subclasses set ``file`` (schema) and ``name`` (file name)."""

    name: ClassVar[str]

    def __init__(self, folder: Path) -> None:
        super().__init__(folder / SIDE_FOLDER / self.name)

    def _before_open(self) -> None:
        ignore = self.path.parent / ".gitignore"
        if not ignore.exists():
            self.path.parent.mkdir(parents=True, exist_ok=True)
            ignore.write_text(_IGNORE, encoding="utf-8")
