"""The ``memory`` section's NLI part, fast: a few pairs through the real write path (real SQLite
projects, the ``hash`` embedder), the data step's seeded sample, and a missing sample reported."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engram_bench.memory as memory_section
from engram.plugins import build_registry, get_plugin_manager
from engram_bench.config import quick_config
from engram_bench.memory import render_memory, run_memory
from engram_bench.memory.nli_data import LABELS, Pair, half, load_pairs, main, write_pairs

PAIRS = [
    Pair("same", "entailment", "A dog licks his nose.", "A dog licks his nose."),
    Pair("walk", "contradiction", "The man is walking.", "The man is not walking."),
    Pair(
        "look", "contradiction", "A girl is looking up at the sky.", "A girl looks down at the sky."
    ),
    Pair("sunset", "neutral", "Two dogs run on the beach.", "Two dogs run on the beach at sunset."),
]


def test_a_few_pairs_through_the_real_write_path(tmp_path: Path) -> None:
    source = tmp_path / "pairs.jsonl"
    write_pairs(PAIRS, source)
    config = quick_config(nli_pairs=source, nli_per_label=None)
    notes: list[str] = []
    registry = build_registry(get_plugin_manager())
    results = {"memory": run_memory(config, registry, tmp_path / "work", lambda _: None, notes)}
    runs = results["memory"]["nli"]["runs"]
    assert [(r["extractor"], r["type"]) for r in runs] == [
        ("rules", "note"),
        ("rules", "architecture"),
    ]
    for run in runs:
        assert run["pairs"] == {"entailment": 1, "neutral": 1, "contradiction": 2}
        outcomes = run["outcomes"]
        assert outcomes["entailment"]["merged"] == 1
        assert outcomes["contradiction"]["superseded"] == 2
        assert outcomes["neutral"]["merged"] == 0 and outcomes["neutral"]["superseded"] == 0
        assert run["supersede_precision"] == 1.0 and run["supersede_recall"] == 1.0
        assert run["dedup_precision"] == 1.0 and run["a_lost"] == 0
        halves = run["halves"]
        assert set(halves) == {"dev", "held-out"}
        assert sum(h["superseded"]["contradiction"] for h in halves.values()) == 2
        assert sum(sum(h["pairs"].values()) for h in halves.values()) == len(PAIRS)
    markdown = "\n".join(render_memory(results))
    assert "Supersede by half" in markdown and "| held-out |" in markdown
    assert "| rules | architecture | contradiction | 2 | 0 | 2 |" in markdown
    assert any("llm" in n for n in notes) or len(runs) == 4


def test_the_data_step_draws_a_seeded_sample_per_label(tmp_path: Path) -> None:
    rows = [
        {"pairID": f"{label}-{i}", "gold_label": label, "sentence1": f"A {i}.", "sentence2": "B."}
        for label in (*LABELS, "-")
        for i in range(400)
    ]
    full = tmp_path / "snli.jsonl"
    full.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    first, second = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    assert main([str(full), str(first)]) == 0 and main([str(full), str(second)]) == 0
    assert first.read_bytes() == second.read_bytes()
    pairs = load_pairs(first)
    assert {label: sum(p.label == label for p in pairs) for label in LABELS} == dict.fromkeys(
        LABELS, 300
    )
    assert len(load_pairs(first, per_label=5)) == 15


def test_a_missing_sample_is_reported_as_skipped_with_where_to_put_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A local copy (bench/data/snli, ignored by git) would be found: point past it.
    monkeypatch.setattr(memory_section, "DEFAULT_PAIRS", tmp_path / "none" / "pairs.jsonl")
    config = quick_config(data=tmp_path / "no-data")
    notes: list[str] = []
    registry = build_registry(get_plugin_manager())
    results = {"memory": run_memory(config, registry, tmp_path / "work", lambda _: None, notes)}
    assert "no SNLI sample at" in results["memory"]["nli"]["skipped"]
    assert "no LoCoMo data under" in results["memory"]["extraction"][0]["skipped"]
    markdown = "\n".join(render_memory(results))
    assert "Skipped: no SNLI sample" in markdown and "no LoCoMo data" in markdown


def test_the_halves_are_fixed_by_the_premise_and_both_are_used() -> None:
    """Pairs of one SNLI premise (``<image>#<n>r1e``, ``…r1c``, ``…r1n``) fall in one half, so no
    premise is tuned on in ``dev`` and then scored in ``held-out``."""
    premises = [f"{1000 + i}.jpg#{i % 5}" for i in range(200)]
    for premise in premises:
        assert len({half(f"{premise}r1{tail}") for tail in "ecn"}) == 1
    assert {half(f"{p}r1e") for p in premises} == {"dev", "held-out"}
    counts = [sum(half(f"{p}r1e") == h for p in premises) for h in ("dev", "held-out")]
    assert min(counts) > 60
