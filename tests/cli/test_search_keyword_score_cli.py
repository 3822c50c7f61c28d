"""Keyword-only results (``--mode keyword``, or hybrid degraded to keyword when the embedder is
down) print a score that says something: raw BM25 magnitudes on a small corpus are around 1e-6
and printed as ``0.000``, which reads as "no match" (issue 38). The table shows each hit
relative to the best; ``--json`` keeps the raw score."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engram.cli.search import shown_scores
from engram.models import Chunk, Hit, SearchResult
from support import cli, cli_json, write_vault


def test_keyword_mode_shows_scores_relative_to_the_best_hit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_vault(
        tmp_path / "notes",
        {
            "billing.md": "# Billing\n\nBilling deploys on Fridays; billing owner Alice.\n",
            "deploys.md": "# Deploys\n\nDeploys go out on Tuesdays after review.\n",
            "lint.md": "# Tooling\n\nUse ruff for linting and mypy for types in Python.\n",
        },
    )
    (tmp_path / "engram.toml").write_text(
        '[vault]\npaths = ["notes"]\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert cli(capsys, "index")[0] == 0
    raw = cli_json(capsys, "search", "billing deploys", "--mode", "keyword")["hits"]
    assert len(raw) == 2 and raw[0]["score"] >= raw[1]["score"] > 0  # raw, in the store's scale
    code, out = cli(capsys, "search", "billing deploys", "--mode", "keyword")[:2]
    assert code == 0 and "score (vs best)" in out
    shown = re.findall(r"│\s+\d\s+│\s+(<?[0-9.]+)\s+│", out)
    assert len(shown) == 2 and shown[0] == "1.000"
    assert shown[1] == "<0.001" or 0 < float(shown[1]) <= 1.0
    assert "0.000" not in out


def hit(score: float) -> Hit:
    return Hit(chunk=Chunk(id=f"c{score}", document_id="a.md", text="x"), score=score)


def test_a_degraded_hybrid_search_is_shown_the_same_way() -> None:
    result = SearchResult(
        query="q",
        mode="keyword",
        hits=[hit(2e-6), hit(1e-6), hit(1e-12)],
        degraded=True,
        warnings=["down"],
    )
    assert shown_scores(result) == ["1.000", "0.500", "<0.001"]
    hybrid = SearchResult(query="q", mode="hybrid", hits=[hit(0.8123)])
    assert shown_scores(hybrid) == ["0.812"]
    nothing = SearchResult(query="q", mode="keyword", hits=[hit(0.0)])
    assert shown_scores(nothing) == ["0"]
