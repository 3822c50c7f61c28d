"""Reading a changed file: at most ``max_bytes`` are ever read, whether the size the scan saw
is passed in (no second stat) or the file is stat'ed here, and whether it grew in between."""

from __future__ import annotations

from pathlib import Path

from engram.ingest.report import Skipped
from engram.ingest.sync import read_text
from engram.ingest.vault import VaultFile


def test_a_file_is_read_within_its_limit_whatever_size_the_caller_saw(tmp_path: Path) -> None:
    small, big = tmp_path / "small.md", tmp_path / "big.md"
    small.write_text("hello", encoding="utf-8")
    big.write_text("x" * 100, encoding="utf-8")
    ok = read_text(VaultFile(small, tmp_path, "small.md"), 10)
    assert isinstance(ok, tuple) and ok[0] == "hello"
    assert read_text(VaultFile(small, tmp_path, "small.md"), 10, size=5) == ok
    for size in (None, 100, 5):  # stat'ed here, seen large, seen small (it grew since)
        got = read_text(VaultFile(big, tmp_path, "big.md"), 10, size=size)
        assert isinstance(got, Skipped) and "larger than 10 bytes" in got.reason
    gone = read_text(VaultFile(tmp_path / "gone.md", tmp_path, "gone.md"), 10, size=5)
    assert isinstance(gone, Skipped) and gone.reason.startswith("unreadable")
