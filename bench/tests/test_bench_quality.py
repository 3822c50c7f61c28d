"""Quality runs on the sample datasets with the built-in parts (memory store, hash embedder)."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from engram.config import SearchConfig
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import embedder_identity
from engram.registry import Registry
from engram.search import HybridSearcher
from engram_bench.dataset_types import Dataset
from engram_bench.datasets import load_beir, load_locomo
from engram_bench.embedding import FixedEmbedder, build_embedder, cached
from engram_bench.quality import (
    CHUNKER,
    MODES,
    Embedded,
    embed_dataset,
    evaluate,
    index_docs,
    run_dataset,
    run_store,
)
from engram_bench.samples import write_beir, write_locomo
from engram_bench.stores import StoreSpec, select_stores


@pytest.fixture(scope="module")
def registry() -> Registry:
    return build_registry(get_plugin_manager(load_entry_points=False))


@pytest.fixture(scope="module")
def memory_spec(registry: Registry) -> StoreSpec:
    return select_stores(registry, ["memory"], {})[0][0]


def _embedded(registry: Registry, dataset: Dataset, cache: Path) -> Embedded:
    embedder = cached(build_embedder(registry, "hash", {"dimension": 64}), cache)
    try:
        return embed_dataset(dataset, embedder, lambda _: None)
    finally:
        assert embedder.cache is not None
        embedder.cache.close()


def test_every_mode_is_scored_and_the_exact_store_matches_numpy(
    tmp_path: Path, registry: Registry, memory_spec: StoreSpec
) -> None:
    dataset = load_locomo(write_locomo(tmp_path / "l.json"))
    embedded = _embedded(registry, dataset, tmp_path / "cache.sqlite")
    result = run_dataset(
        dataset,
        [embedded],
        [memory_spec],
        workdir=tmp_path / "w",
        latency_queries=2,
        log=lambda _: None,
    )
    rows = {(r["store"], r["mode"]): r for r in result["rows"]}
    assert set(rows) == {("numpy-exact", "vector")} | {("memory", m.name) for m in MODES}
    assert rows[("memory", "vector")]["metrics"] == rows[("numpy-exact", "vector")]["metrics"]
    assert rows[("memory", "keyword")]["embedder"] is None
    assert rows[("memory", "hybrid-rrf")]["latency_ms"]["n"] == 2
    for row in result["rows"]:
        assert set(row["metrics"]) == {"recall@5", "recall@10", "ndcg@10", "recall@100"}
        assert row["queries"] == dataset.query_count
        assert sum(c["queries"] for c in row["per_category"].values()) == dataset.query_count
    assert result["errors"] == []
    assert result["embedding"]["hash"]["embedded_now"] == embedded.stats.embedded
    paired = {p["mode"]: p for p in result["paired"]}
    assert set(paired) == {"hybrid-default", "hybrid-weighted", "hybrid-rrf", "hybrid-standout"}
    single = {m: rows[("memory", m)]["metrics"]["ndcg@10"] for m in ("keyword", "vector")}
    for mode, entry in paired.items():
        assert entry["versus"] == max(single, key=lambda m: single[m])
        gap = rows[("memory", mode)]["metrics"]["ndcg@10"] - single[entry["versus"]]
        assert entry["mean"] == pytest.approx(gap)
        assert entry["low"] <= entry["mean"] <= entry["high"]
        held = entry["held_out"]
        assert 0 < held["queries"] < dataset.query_count
        assert held["low"] <= held["mean"] <= held["high"]
        recall = {m: rows[("memory", m)]["metrics"]["recall@100"] for m in ("keyword", "vector")}
        assert entry["recall"]["best"] == max(recall.values())
        assert entry["recall"]["hybrid"] == rows[("memory", mode)]["metrics"]["recall@100"]
        assert entry["recall"]["ok"] == (entry["recall"]["hybrid"] >= max(recall.values()) - 0.01)
    assert all("per_query" not in row for row in result["rows"])


@pytest.mark.parametrize("everywhere", [False, True])
def test_the_floor_embedder_runs_on_every_store_unless_trimmed_to_the_first(
    tmp_path: Path, registry: Registry, memory_spec: StoreSpec, everywhere: bool
) -> None:
    dataset = load_locomo(write_locomo(tmp_path / "l.json"))
    first = _embedded(registry, dataset, tmp_path / "cache.sqlite")
    floor = replace(first, embedder="floor")
    second = replace(memory_spec, name="second")
    result = run_dataset(
        dataset,
        [first, floor],
        [memory_spec, second],
        workdir=tmp_path / "w",
        latency_queries=1,
        log=lambda _: None,
        floor_on_every_store=everywhere,
    )
    ran = {(r["store"], r["embedder"]) for r in result["rows"]}
    assert {("numpy-exact", "hash"), ("numpy-exact", "floor"), ("memory", "floor")} <= ran
    assert (("second", "floor") in ran) is everywhere
    assert ("second", "hash") in ran and result["errors"] == []


def test_the_per_query_memo_changes_no_ranking(
    tmp_path: Path, registry: Registry, memory_spec: StoreSpec
) -> None:
    dataset = load_beir(write_beir(tmp_path / "b"))
    embedded = _embedded(registry, dataset, tmp_path / "cache.sqlite")
    rows = run_store(
        dataset, memory_spec, embedded, tmp_path / "s", with_keyword=True, latency_queries=1
    )
    # The same searches without the memo, one store call per side per mode.
    store = memory_spec.build(tmp_path / "direct")
    embedder = FixedEmbedder("hash", embedded.model, embedded.dimension, embedded.queries)
    store.set_identity(embedder_identity(embedder, CHUNKER))
    index_docs(store, dataset.groups[0].docs, embedded.groups[0])
    for mode in MODES:
        options = {**dict(mode.options), "min_score": 0.0, "fusion": mode.fusion, "limit": 101}
        searcher = HybridSearcher(SearchConfig.model_validate(options))
        found = {
            q.id: [
                h.chunk.id for h in searcher.search(q.text, store, embedder, mode=mode.mode).hits
            ]
            for q in dataset.groups[0].queries
        }
        direct = evaluate(dataset, found)["metrics"]
        (row,) = [r for r in rows if r["mode"] == mode.name]
        assert row["metrics"] == pytest.approx(direct)


def test_a_hit_with_the_query_id_is_ignored_as_beir_does(
    tmp_path: Path, registry: Registry, memory_spec: StoreSpec
) -> None:
    folder = write_beir(tmp_path / "b")
    with (folder / "corpus.jsonl").open("a") as fh:
        fh.write(
            json.dumps({"_id": "q2", "title": "", "text": "wild yeast in bread starter"}) + "\n"
        )
    full = load_beir(folder)
    (group,) = full.groups
    only_q2 = replace(group, queries=[q for q in group.queries if q.id == "q2"])
    dataset = replace(full, groups=[only_q2])
    embedded = _embedded(registry, dataset, tmp_path / "cache.sqlite")
    rows = run_store(
        dataset, memory_spec, embedded, tmp_path / "s", with_keyword=True, latency_queries=1
    )
    keyword = next(r for r in rows if r["mode"] == "keyword")
    # The document "q2" repeats the query word for word and would rank first; BEIR's evaluator
    # drops it, which leaves the one relevant document, d2, on top.
    assert keyword["metrics"]["ndcg@10"] == pytest.approx(1.0)
    kept = replace(dataset, ignore_identical_ids=False)
    rows = run_store(
        kept, memory_spec, embedded, tmp_path / "s", with_keyword=True, latency_queries=1
    )
    keyword = next(r for r in rows if r["mode"] == "keyword")
    assert keyword["metrics"]["ndcg@10"] == pytest.approx(1 / math.log2(3))
