"""Damage done to a SQLite index under a process that has it open, as a user, a crash or
another process would: cut short, replaced by a new index, broken deep down (a table's pages
overwritten, the file still opens), deleted. Shared by the MCP, dashboard and watch tests."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

KINDS = ("truncated", "replaced", "deeply damaged", "deleted")
# Tables and indexes whose pages "deeply damaged" overwrites: every search and write reads
# some of them, but opening the index (schema and meta) does not.
DEEP = ("chunks_fts_data", "chunks_fts_idx", "sqlite_autoindex_chunks_1", "chunks_document")


def index_of(root: Path) -> Path:
    return root / ".engram" / "index.sqlite"


def checkpoint(index: Path) -> None:
    """Move the WAL's pages into the file, so what is done to the file is what is read."""
    conn = sqlite3.connect(index, timeout=30)
    try:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    finally:
        conn.close()


def damage(root: Path, kind: str, env: dict[str, str] | None = None) -> None:
    """Do ``kind`` to the project's index while another process has it open."""
    index = index_of(root)
    checkpoint(index)
    if kind == "truncated":
        with index.open("r+b") as fh:
            fh.truncate(index.stat().st_size // 2)
    elif kind == "replaced":  # what the CLI does to a damaged index: aside, then made anew
        for path in index.parent.glob("index.sqlite*"):
            if not path.name.endswith(".lock"):
                os.replace(path, path.with_name(path.name + ".aside"))
        made = subprocess.run(
            [sys.executable, "-m", "engram", "index"],
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert made.returncode == 0, made.stderr
    elif kind == "deeply damaged":
        conn = sqlite3.connect(index)
        try:
            names = ",".join("?" * len(DEEP))
            pages = [
                int(r[0])
                for r in conn.execute(
                    f"SELECT rootpage FROM sqlite_master WHERE name IN ({names})", DEEP
                )
            ]
            size = int(conn.execute("PRAGMA page_size").fetchone()[0])
        finally:
            conn.close()
        with index.open("r+b") as fh:
            for page in pages:
                fh.seek((page - 1) * size)
                fh.write(b"\xff" * size)
    elif kind == "deleted":
        index.unlink()
    else:
        raise ValueError(kind)
