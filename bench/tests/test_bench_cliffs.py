"""The query part of the speed run on the SQLite store, which can run hybrid search's halves at
once: the bench times it also with the halves one after the other, in the same turns."""

from __future__ import annotations

from pathlib import Path

from engram.plugins import build_registry, get_plugin_manager
from engram_bench.cliffs import one_after_the_other
from engram_bench.speed import run_speed
from engram_bench.stores import select_stores


def test_sqlite_hybrid_is_timed_with_and_without_its_halves_at_once(tmp_path: Path) -> None:
    registry = build_registry(get_plugin_manager())
    specs, _ = select_stores(registry, ["sqlite"], {})
    result = run_speed(
        specs,
        [600],
        workdir=tmp_path,
        dim=16,
        query_count=6,
        batch=250,
        cold_open=False,
        log=lambda _: None,
    )
    (row,) = result["runs"][0]["stores"]
    assert "error" not in row, row.get("error")
    together, apart = row["paired"]["hybrid"], row["paired"]["hybrid_one_after_the_other"]
    assert together[0] == apart[0]  # one numpy floor: both timed on each query in turn
    assert together[1]["n"] == apart[1]["n"] == 6
    assert row["ratios"]["hybrid_one_after_the_other_p50_x_paired_numpy"] > 0


def test_a_store_that_runs_halves_one_by_one_is_not_timed_twice(tmp_path: Path) -> None:
    registry = build_registry(get_plugin_manager(load_entry_points=False))
    (spec,), _ = select_stores(registry, ["memory"], {})
    store = spec.build(tmp_path)
    try:
        assert one_after_the_other(store) is None
    finally:
        store.close()
