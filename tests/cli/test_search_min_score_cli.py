"""``min_score`` in hybrid search through the real CLI with the real local model: a note the
vector side alone finds above the threshold is shown by hybrid too, first (issue 26: ``engram
search kitten`` found the cats note in vector mode at cosine 0.44 and nothing in hybrid mode,
whose fused score diluted it to 0.27 under the default ``min_score`` 0.35); a query nothing in
the vault is about answers nothing in either mode (the bar is for the best hit, issue 39)."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli, cli_json, write_vault


def test_hybrid_keeps_what_vector_mode_shows_above_min_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vault(
        tmp_path / "notes",
        {
            "cats.md": "# Pets\n\nMy cats are called Miso and Tofu; they sleep on the sofa.\n",
            "billing.md": "# Billing\n\nThe billing service deploys on Fridays after review.\n",
            "lint.md": "# Tooling\n\nUse ruff for linting and mypy for types in Python.\n",
        },
    )
    (tmp_path / "engram.toml").write_text(
        '[vault]\npaths = ["notes"]\n[embedder]\nprovider = "local"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "index")[0] == 0
    vector = cli_json(capsys, "search", "kitten", "--mode", "vector")["hits"]
    keyword = cli_json(capsys, "search", "kitten", "--mode", "keyword")["hits"]
    hybrid = cli_json(capsys, "search", "kitten", "--mode", "hybrid")["hits"]
    assert keyword == []  # no note has the word: only the vector side can find it
    assert vector[0]["path"] == "notes/cats.md"
    assert vector[0]["score"] >= 0.35  # the default min_score: the ranking is shown
    assert hybrid[0]["path"] == "notes/cats.md"
    assert {h["path"] for h in hybrid} == {h["path"] for h in vector}
    for mode in ("vector", "hybrid"):
        unrelated = cli_json(capsys, "search", "quarterly tax depreciation", "--mode", mode)
        assert unrelated["hits"] == [], mode  # nothing clears min_score, no word matches
