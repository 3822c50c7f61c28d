"""The ``memory`` section's judge part on small files of the real formats: updates and controls
through the real write path (real SQLite projects; the local embedder, as the hash one puts a
move far from its fact), and LoCoMo facts replayed with every supersede listed with both
wordings and a reason."""

from __future__ import annotations

import json
from pathlib import Path

from engram.plugins import build_registry, get_plugin_manager
from engram_bench.embedding import build_embedder, cached
from engram_bench.memory.judge import UPDATES_FILE, render_judge, run_judge

CASES = [
    ("I live at 42 Birch Street in Portland.", "I moved. My new address is 118 Cedar Avenue."),
    ("Alice lives in Paris.", "Alice moved to Berlin."),
]


def _data(root: Path) -> Path:
    updates = root / UPDATES_FILE
    updates.parent.mkdir(parents=True)
    cases = [
        {"case_id": f"c{i}", "initial_fact": old, "contradicting_fact": new}
        for i, (old, new) in enumerate(CASES)
    ]
    updates.write_text(json.dumps({"cases": cases}), encoding="utf-8")
    turn = {"speaker": "Alice", "dia_id": "D1:1", "text": "hi"}
    facts = [["Alice lives in Paris.", "D1:1"], ["Alice moved to Berlin.", "D1:1"]]
    sample = {
        "sample_id": "conv-1",
        "conversation": {"speaker_a": "Alice", "speaker_b": "Bob", "session_1": [turn]},
        "observation": {
            "session_1_observation": {"Alice": facts, "Bob": [["Bob lives in Paris.", "D1:1"]]}
        },
    }
    (root / "locomo").mkdir()
    (root / "locomo" / "locomo10.json").write_text(json.dumps([sample]), encoding="utf-8")
    return root


def test_updates_controls_and_locomo_links_are_counted_and_listed(tmp_path: Path) -> None:
    registry = build_registry(get_plugin_manager())
    embedder = cached(build_embedder(registry, "local", {}), None)
    results = run_judge(_data(tmp_path / "data"), registry, embedder, tmp_path / "work")
    counts = results["updates"]["counts"]
    assert sum(counts["update"].values()) == 2 and sum(counts["control"].values()) == 2
    assert counts["control"]["merged"] == counts["control"]["superseded"] == 0
    assert results["updates"]["lost"] == 0
    locomo = results["locomo"]
    assert locomo["halves"]["dev"]["writes"] == 3
    moves = [x for x in locomo["listed"] if x["kind"] == "supersedes"]
    assert len(moves) == 1, locomo["listed"]
    for listed in moves:
        assert (
            listed["old"] == "Alice lives in Paris." and listed["new"] == "Alice moved to Berlin."
        )
        assert listed["reason"] and listed["reason"] != "?"
    assert all("Bob" not in x["old"] + x["new"] for x in locomo["listed"])
    markdown = "\n".join(render_judge(results))
    assert (
        "| update |" in markdown
        and "| control |" in markdown
        and "- dev: 1 conversations" in markdown
    )
