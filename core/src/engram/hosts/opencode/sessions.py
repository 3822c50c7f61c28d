"""OpenCode's sessions, wherever its version keeps them: ``opencode.db`` (1.2 and later) and
the older JSON tree (``storage/``) as a fallback, one session once (the database wins when a
session is in both, as other readers of OpenCode history do)."""

from __future__ import annotations

import os
from pathlib import Path

from engram.hosts.opencode.sessions_db import DB_NAME, OpenCodeDatabase
from engram.hosts.opencode.sessions_tree import OpenCodeTree
from engram.ingest.sessions.base import SessionRef, Transcript

AGENT = "opencode"


def default_root() -> Path:
    """OpenCode's data folder: ``$XDG_DATA_HOME/opencode`` (``opencode.db``, ``storage/``)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "opencode"


def locate(root: Path) -> tuple[Path, Path]:
    """(database file, storage folder) for a configured path: the data folder, its
    ``storage`` subfolder (what older configs name) or the database file itself."""
    root = root.expanduser()
    if root.suffix == ".db":
        return root, root.parent / "storage"
    if (root / DB_NAME).exists() or (root / "storage").is_dir():
        return root / DB_NAME, root / "storage"
    if root.name == "storage" or (root / "message").is_dir():
        return root.parent / DB_NAME, root
    return root / DB_NAME, root / "storage"


class OpenCodeSource:
    """Every OpenCode session of a data folder; ``project`` keeps those run inside it."""

    agent = AGENT

    def __init__(self, root: Path, project: Path | None = None) -> None:
        self.root = root.expanduser()
        db_path, storage = locate(self.root)
        self.database = OpenCodeDatabase(db_path, project)
        self.tree = OpenCodeTree(storage, project)

    def discover(self) -> tuple[list[SessionRef], list[str]]:
        refs: list[SessionRef] = []
        warnings: list[str] = []
        if self.database.path.is_file():
            refs, warnings = self.database.discover()
        if self.tree.root.is_dir():
            known = {r.session_id for r in refs}
            legacy, more = self.tree.discover()
            refs += [r for r in legacy if r.session_id not in known]
            warnings += more
        return refs, warnings

    def load(self, ref: SessionRef) -> Transcript:
        if ref.path.suffix == ".db":  # the database the session was found in
            return OpenCodeDatabase(ref.path).load(ref)
        return self.tree.load(ref)
