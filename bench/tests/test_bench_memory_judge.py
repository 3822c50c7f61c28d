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
    # (old, new, control, TempLAMA's split): the set's own templates, a role and a single value
    (
        "Ruud Brood is the head coach of NAC Breda.",
        "Jan Wouters is the head coach of NAC Breda.",
        "Jan Wouters is the head coach of FC Utrecht.",
        "train",
    ),
    (
        "Katie Chapman plays for Arsenal W.F.C..",
        "Katie Chapman plays for Chelsea L.F.C..",
        "Kenneth Vermeer plays for Chelsea L.F.C..",
        "test",
    ),
]


def _data(root: Path) -> Path:
    updates = root / UPDATES_FILE
    updates.parent.mkdir(parents=True)
    lines = [
        json.dumps(
            {
                "id": f"c{i}",
                "relation": "r",
                "old": old,
                "new": new,
                "control": control,
                "source_split": split,
            }
        )
        for i, (old, new, control, split) in enumerate(CASES)
    ]
    updates.write_text("\n".join(lines) + "\n", encoding="utf-8")
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
    # Both updates supersede (one per half); both controls stay apart.
    assert counts["update dev"]["superseded"] == 1 and counts["update held-out"]["superseded"] == 1
    for half in ("dev", "held-out"):
        control = counts[f"control {half}"]
        assert sum(control.values()) == 1
        assert control["merged"] == control["superseded"] == control["conflicts"] == 0
    assert results["updates"]["lost"] == 0 and results["updates"]["rows"] == []
    assert results["extractor"] == "rules" and results["others"] == {}
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
    assert "With `rules`:" in markdown and "| update dev |" in markdown
    assert "| control held-out |" in markdown and "- dev: 1 conversations" in markdown
