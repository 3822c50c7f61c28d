"""``engram bench --quick`` end to end, on every installed store: the benchmark is a tool, and
this keeps it working. No timing is asserted, only that every section and file is there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.cli import main
from engram.plugins import build_registry, get_plugin_manager
from engram_bench.samples import write_samples
from engram_bench.speed import run_speed
from engram_bench.stores import select_stores

SECTIONS = {"machine", "versions", "config", "quality", "peers", "speed", "pipeline", "memory"}


def test_quick_bench_covers_every_installed_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], request: pytest.FixtureRequest
) -> None:
    if "postgres" in build_registry(get_plugin_manager()).names("store"):
        request.getfixturevalue("postgres_dsn")  # a real server for the Postgres store's run
    data = write_samples(tmp_path / "data")
    out = tmp_path / "results"
    code = main(
        [
            "bench",
            "--quick",
            "--data",
            str(data),
            "--out",
            str(out),
            "--cache",
            str(tmp_path / "cache"),
            "--vault-files",
            "8",
        ]
    )
    printed, errors = capsys.readouterr()
    assert code == 0, errors
    files = [Path(line) for line in printed.split()]
    assert all(f.exists() and f.stat().st_size > 0 for f in files)
    (report,) = [f for f in files if f.suffix == ".json"]
    assert report.with_suffix(".md") in files
    assert len([f for f in files if f.suffix == ".png"]) >= 5

    results = json.loads(report.read_text())
    installed = build_registry(get_plugin_manager()).names("store")
    assert set(results) >= SECTIONS
    assert sorted(results["stores"]) == installed
    assert next(iter(results["stores"])) == "sqlite"  # the default store leads
    for dataset in results["quality"]["datasets"]:
        assert dataset["errors"] == []
        ran = {(r["store"], r["mode"]) for r in dataset["rows"]}
        for store in installed:
            modes = {"keyword", "vector", "hybrid-weighted", "hybrid-rrf"}
            assert {(store, m) for m in modes} <= ran
    (speed,) = results["speed"]["runs"]
    assert [r["store"] for r in speed["stores"]] == list(results["stores"])
    for row in speed["stores"]:
        assert "error" not in row, row
        assert row["count"] == speed["chunks"]
        assert 0.0 <= row["ann_recall_at_10"] <= 1.0
    for row in results["pipeline"]["stores"]:
        assert "error" not in row, row
        first, noop, changed = row["runs"]
        assert first["new"] == 8 and noop["unchanged"] == 8 and changed["changed"] == 1

    markdown = report.with_suffix(".md").read_text()
    for store in installed:
        assert f"| {store} |" in markdown


def test_a_fresh_process_opens_the_sqlite_store(tmp_path: Path) -> None:
    registry = build_registry(get_plugin_manager())
    specs, _ = select_stores(registry, ["sqlite"], {})
    result = run_speed(
        specs,
        [300],
        workdir=tmp_path,
        dim=16,
        query_count=5,
        batch=100,
        cold_open=True,
        log=lambda _: None,
    )
    (row,) = result["runs"][0]["stores"]
    assert row["disk_bytes"] > 0 and row["reopen_ms"] > 0
    cold = row["cold_open"]
    assert "error" not in cold, cold
    assert cold["count"] == 300 and cold["import_ms"] > 0 and cold["first_query_ms"] > 0


def test_bad_options_are_one_line_errors(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--quick", "--scale", "lots"]) == 1
    assert "--scale takes chunk counts" in capsys.readouterr().err
    assert main(["bench", "--quick", "--stores", "nosuch"]) == 1
    assert "no store named 'nosuch'" in capsys.readouterr().err
    assert main(["bench", "--quick", "--store-option", "sqlite=1"]) == 1
    assert "NAME.KEY=VALUE" in capsys.readouterr().err
