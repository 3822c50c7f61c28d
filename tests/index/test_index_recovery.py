"""A damaged ``index.sqlite`` (garbage or cut short) is derived data: the next command moves it
aside for inspection, rebuilds it from the markdown with one warning line, and answers; the
markdown is never touched. Real subprocesses of the installed ``engram``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from support import note, write_vault

ENGRAM = Path(sys.executable).parent / "engram"
TOML = '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n[vault]\npaths = ["notes"]\n'


def engram(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ENGRAM), *args], cwd=root, capture_output=True, text=True, timeout=600, check=False
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "p"
    write_vault(root, {f"notes/n{i}.md": note(i) for i in range(40)})
    (root / "engram.toml").write_text(TOML, encoding="utf-8")
    assert engram(root, "index").returncode == 0
    return root


def damage(index: Path, how: str) -> bytes:
    good = index.read_bytes()
    for side in index.parent.glob("index.sqlite-*"):
        side.unlink()
    bad = b"garbage, not a database " * 200 if how == "garbage" else good[: len(good) // 3]
    index.write_bytes(bad)
    return bad


@pytest.mark.parametrize("how", ["garbage", "truncated"])
def test_the_next_search_rebuilds_a_damaged_index_and_answers(project: Path, how: str) -> None:
    index = project / ".engram" / "index.sqlite"
    markdown = {p: p.read_bytes() for p in (project / "notes").iterdir()}
    bad = damage(index, how)
    run = engram(project, "search", "postgres replication", "--json")
    assert run.returncode == 0, run.stderr
    assert "notes/n" in run.stdout and "postgres" in run.stdout
    warnings = [x for x in run.stderr.splitlines() if x.strip()]
    assert len(warnings) == 1, run.stderr
    assert "damaged" in warnings[0] and "rebuilt from the markdown" in warnings[0]
    [kept] = index.parent.glob("index.sqlite.corrupt-*")
    assert kept.read_bytes() == bad and kept.name in warnings[0]
    assert {p: p.read_bytes() for p in (project / "notes").iterdir()} == markdown
    # Once rebuilt, the index is whole: the next command says nothing more.
    again = engram(project, "search", "postgres replication", "--json")
    assert again.returncode == 0 and again.stderr.strip() == "", again.stderr


def test_reset_empties_the_index_only_and_asks_for_yes(project: Path) -> None:
    memory = engram(project, "remember", "Deploys go out on Tuesdays.")
    assert memory.returncode == 0, memory.stderr
    files = {p: p.read_bytes() for p in project.rglob("*.md")}
    refused = engram(project, "reset")
    assert refused.returncode == 1 and "--yes" in refused.stderr
    assert "Traceback" not in refused.stderr
    done = engram(project, "reset", "--yes")
    assert done.returncode == 0, done.stderr
    stats = engram(project, "stats")
    assert "(0 documents, 0 chunks)" in stats.stdout, stats.stdout
    assert {p: p.read_bytes() for p in project.rglob("*.md")} == files
    # A damaged index is moved aside by reset too, and the index is fresh.
    damage(project / ".engram" / "index.sqlite", "garbage")
    assert engram(project, "reset", "--yes").returncode == 0
    assert "(0 documents, 0 chunks)" in engram(project, "stats").stdout
    assert engram(project, "index").returncode == 0
    assert "(0 documents" not in engram(project, "stats").stdout
