"""The synthetic corpus, the numpy baseline and one store's speed run (memory store: core only)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engram.errors import ConfigError, PluginNotFound
from engram.plugins import build_registry, get_plugin_manager
from engram.registry import Registry
from engram_bench import synthetic
from engram_bench.speed import exact_top_k, measure_baseline, run_speed
from engram_bench.stores import select_stores


@pytest.fixture(scope="module")
def registry() -> Registry:
    return build_registry(get_plugin_manager(load_entry_points=False))


def test_corpus_is_deterministic_and_smaller_scales_are_prefixes() -> None:
    small = synthetic.corpus(300, dim=32)
    again = synthetic.corpus(300, dim=32)
    large = synthetic.corpus(12_000, dim=32)
    assert np.array_equal(small.vectors, again.vectors) and small.texts == again.texts
    assert np.array_equal(large.vectors[:300], small.vectors)
    assert large.texts[:300] == small.texts
    assert np.allclose(np.linalg.norm(large.vectors, axis=1), 1.0, atol=1e-5)
    assert all(30 <= len(t.split()) <= 90 for t in small.texts)


def test_queries_sit_near_a_corpus_row_and_use_three_words() -> None:
    data = synthetic.corpus(500, dim=32)
    queries = synthetic.queries(data, 10)
    best = (data.vectors @ queries.vectors.T).max(axis=0)
    assert (best > 0.9).all()
    assert all(len(t.split()) == 3 for t in queries.texts)


def test_exact_top_k_matches_a_full_sort() -> None:
    rng = np.random.default_rng(5)
    matrix = rng.standard_normal((200, 16)).astype(np.float32)
    query = rng.standard_normal(16).astype(np.float32)
    expected = np.argsort(-(matrix @ query), kind="stable")[:10].tolist()
    assert exact_top_k(matrix, query, 10) == expected
    assert len(exact_top_k(matrix[:4], query, 10)) == 4


def test_baseline_answers_are_the_exact_neighbours(tmp_path: Path) -> None:
    data = synthetic.corpus(400, dim=16)
    queries = synthetic.queries(data, 8)
    baseline, answers = measure_baseline(data, queries, tmp_path)
    assert baseline["vector_ms"]["n"] == 8 and baseline["ingest_chunks_per_s"] > 0
    for q, answer in zip(queries.vectors, answers, strict=True):
        assert answer[0] == int(np.argmax(data.vectors @ q))
    assert list(tmp_path.iterdir()) == []  # the floor file is removed


def test_memory_store_speed_run_reports_every_figure(tmp_path: Path, registry: Registry) -> None:
    specs, skipped = select_stores(registry, ["memory"], {})
    assert skipped == {}
    result = run_speed(
        specs,
        [600],
        workdir=tmp_path,
        dim=16,
        query_count=6,
        batch=250,
        cold_open=True,
        log=lambda _: None,
    )
    (run,) = result["runs"]
    (row,) = run["stores"]
    assert row["count"] == 600
    assert row["ann_recall_at_10"] == pytest.approx(1.0)  # an exact store
    for key in ("vector_ms", "keyword_ms", "hybrid_ms"):
        assert row[key]["n"] == 6 and row[key]["p50"] > 0
    assert set(row["ratios"]) == {
        "vector_p50_x_numpy",
        "keyword_p50_x_numpy",
        "hybrid_p50_x_numpy",
        "ingest_share_of_file_floor",
        "after_changes_vector_p50_x_numpy",
        "first_query_same_store_x_p50",
        "vector_p50_x_paired_numpy",
        "hybrid_p50_x_paired_numpy",
    }
    first = row["first_query"]
    assert first["same_store_ms"] > 0 and first["reopened_ms"] is None  # not persistent
    assert row["after_changes"]["changed"] == 300  # half of a store smaller than 10,000
    assert row["after_changes"]["vector_ms"]["n"] == 6
    assert row["after_changes"]["numpy_ms"]["n"] == 6
    for floor, store_ms in row["paired"].values():
        assert floor["n"] == store_ms["n"] == 6
    assert row["chunk_build_per_s"]["validated"] > 0
    assert "disk_bytes" not in row and "cold_open" not in row  # not a persistent store
    assert not any(tmp_path.iterdir())


def test_unknown_stores_and_options_are_config_errors(registry: Registry) -> None:
    with pytest.raises(PluginNotFound, match="installed: memory"):
        select_stores(registry, ["nope"], {})
    with pytest.raises(ConfigError, match="not benchmarked"):
        select_stores(registry, ["memory"], {"other": {"x": 1}})
    specs, skipped = select_stores(registry, ["memory"], {"memory": {"x": 1}})
    assert specs == [] and "--store-option memory.KEY=VALUE" in skipped["memory"]
