"""The README's layout table and the kit's README say what the SQLite store is, and the code
agrees (issue 38: both still said "sqlite-vec + FTS5 in one file" after the store had moved its
vectors to a memory-mapped matrix beside the file). The table is read from README.md itself."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import pytest

from engram.config import load_config
from engram.memory import Memory

REPO = Path(__file__).resolve().parents[2]


def layout_rows() -> dict[str, str]:
    """README.md's "## Layout" table: folder cell → what it says."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0].startswith("`"):
            rows[cells[0]] = cells[1]
    return rows


def test_every_folder_the_table_names_exists() -> None:
    rows = layout_rows()
    assert "`backends/sqlite/`" in rows
    for cell in rows:
        for folder in re.findall(r"`([^`]+/)`", cell):
            assert (REPO / folder).is_dir(), f"README's layout names {folder}, which is gone"


def sqlite_claims() -> list[str]:
    kit = (REPO / "kit" / "README.md").read_text(encoding="utf-8")
    kit_line = " ".join(kit.split("`engram-sqlite`", 1)[1].split("\n-", 1)[0].split())
    return [layout_rows()["`backends/sqlite/`"], kit_line]


@pytest.mark.parametrize("claim", sqlite_claims(), ids=["README layout", "kit README"])
def test_the_sqlite_store_is_described_as_the_code_builds_it(tmp_path: Path, claim: str) -> None:
    """FTS5 in the SQLite file and an exact memory-mapped vector matrix beside it; no
    sqlite-vec table in the file."""
    assert "sqlite-vec" not in claim and "one file" not in claim.replace("one SQLite file", "")
    assert "FTS5" in claim and "memory-mapped vector matrix beside one SQLite file" in claim
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
        'path = ".engram/index.sqlite"\n',
        encoding="utf-8",
    )
    with Memory.open(load_config(start=tmp_path)) as memory:
        memory.remember("The billing service is owned by Alice.")
    index = tmp_path / ".engram" / "index.sqlite"
    assert (tmp_path / ".engram" / "index.sqlite-vectors").is_file()  # the matrix, beside it
    with sqlite3.connect(index) as db:
        virtual = db.execute(
            "SELECT sql FROM sqlite_master WHERE sql LIKE 'CREATE VIRTUAL TABLE%'"
        ).fetchall()
    kinds = {re.search(r"USING (\w+)", sql).group(1) for (sql,) in virtual}  # type: ignore[union-attr]
    assert kinds == {"fts5"}, f"virtual tables in the file: {kinds}"
