"""``engram migrate`` to and from Chroma without re-embedding: SQLite → Chroma → SQLite gives back
what was written (text, metadata, records, identity exactly; vectors up to float32 rounding, as
Chroma's cosine space normalises them), in both modes; and the CLI copies a project into Chroma,
after which one line of config switches to it and nothing is re-embedded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.testing.host import migrate, run_cli
from engram.testing.migration import (
    CHUNKS,
    NOTES,
    QUERIES,
    RECORDS,
    VECTORS,
    assert_same,
    contents,
    fill,
    write_sqlite_project,
)
from engram_chroma.store import ChromaStore
from engram_sqlite import SQLiteOptions, SQLiteStore


def test_sqlite_to_chroma_to_sqlite_gives_back_exactly_the_same(
    make_store: Any, tmp_path: Path
) -> None:
    source = SQLiteStore(SQLiteOptions(path=tmp_path / "source.sqlite"))
    back = SQLiteStore(SQLiteOptions(path=tmp_path / "back.sqlite"))
    try:
        fill(source)
        expected = contents(source)
        chroma: ChromaStore = make_store()
        report = migrate(source, chroma, batch_size=9, verify_sample=CHUNKS)
        assert (report.chunks, report.vectors, report.documents) == (CHUNKS, VECTORS, RECORDS)
        assert report.vector_searches > 0 and report.keyword_searches > 0
        assert_same(contents(chroma), expected)
        migrate(chroma, back, verify_sample=CHUNKS)
        assert_same(contents(back), expected)
    finally:
        source.close()
        back.close()


def test_cli_migrates_into_chroma_and_one_line_switches_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    for var in ("ENGRAM_CONFIG", "ENGRAM_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    config = write_sqlite_project(tmp_path)
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        code = run_cli(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    assert run("index")[0] == 0
    before = [run(*q)[1] for q in QUERIES]
    code, out, err = run("migrate", "--to", "chroma", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["documents"] == NOTES and report["chunks"] == report["vectors"] > NOTES
    assert 'backend = "chroma"' in err

    config.write_text(
        config.read_text(encoding="utf-8").replace('backend = "sqlite"', 'backend = "chroma"'),
        encoding="utf-8",
    )
    after = [run(*q)[1] for q in QUERIES]

    def hits(raw: str) -> dict[tuple[str, int], float]:
        return {(h["path"], h["start_line"]): h["score"] for h in json.loads(raw)["hits"]}

    # The same vectors answer the same way (ties may come back in another order).
    assert hits(after[0]).keys() == hits(before[0]).keys()
    assert list(hits(after[0]).values()) == pytest.approx(list(hits(before[0]).values()), abs=1e-5)
    assert hits(after[1]).keys() == hits(before[1]).keys()
    code, out, _ = run("index")
    assert code == 0 and f"0 new, 0 changed, {NOTES} unchanged" in out, "nothing re-embedded"
    assert (tmp_path / ".engram" / "chroma").is_dir()
