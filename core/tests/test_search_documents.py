"""``per_document``: one hit per file, so ``limit`` counts files even when one long file's
chunks would fill the ranking (Memory, the CLI flag and the MCP tool)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.cli import main
from engram.memory import Memory
from engram.tools import Toolbox
from support import MemoryFactory, write_vault

SECTIONS = 40


def _vault(root: Path) -> None:
    runbook = "# Billing runbook\n\n" + "\n\n".join(
        f"## Step {i}\n\nBilling invoice retry step {i}: billing invoices retry on failure, "
        f"billing checks invoice {i} again." + " filler" * 30
        for i in range(SECTIONS)
    )
    write_vault(
        root / "notes",
        {
            "runbook.md": runbook,
            "owners.md": "# Owners\n\nAlice owns the billing service.\n",
            "oncall.md": "# On-call\n\nBilling pages go to the payments rota.\n",
            "pricing.md": "# Pricing\n\nInvoice totals include billing tax.\n",
            "garden.md": "# Garden\n\nTomatoes need sun.\n",
        },
    )


@pytest.fixture
def memory(tmp_path: Path, open_memory: MemoryFactory) -> Memory:
    _vault(tmp_path)
    m = open_memory(
        vault={"paths": ["notes"]},
        chunking={"max_tokens": 64, "overlap": 0},
        search={"min_score": 0.0},
    )
    m.index()
    return m


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_limit_counts_documents_when_asked(memory: Memory, mode: str) -> None:
    chunks = memory.search("billing invoice retry", mode=mode, limit=4)
    paths = [h.chunk.document_id for h in chunks.hits]
    assert len(paths) == 4
    assert set(paths) == {"notes/runbook.md"}  # one long file fills a chunk ranking

    docs = memory.search("billing invoice retry", mode=mode, limit=4, per_document=True)
    paths = [h.chunk.document_id for h in docs.hits]
    assert len(paths) == len(set(paths)) == 4
    assert paths[0] == "notes/runbook.md"
    assert set(paths) == {
        "notes/runbook.md",
        "notes/owners.md",
        "notes/oncall.md",
        "notes/pricing.md",
    }
    # Each file is represented by its best chunk (in keyword mode, scores do not depend on the
    # candidate pool, so the runbook's best scores as the chunk ranking's first).
    if mode == "keyword":
        assert docs.hits[0].score == pytest.approx(chunks.hits[0].score)
    assert docs.hits == sorted(docs.hits, key=lambda h: -h.score)


def test_fewer_matching_documents_than_the_limit_returns_them_all(memory: Memory) -> None:
    result = memory.search("billing", mode="keyword", limit=10, per_document=True)
    paths = [h.chunk.document_id for h in result.hits]
    assert sorted(paths) == sorted(
        ["notes/runbook.md", "notes/owners.md", "notes/oncall.md", "notes/pricing.md"]
    )


def test_the_config_default_and_the_cli_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _vault(tmp_path)
    (tmp_path / "engram.toml").write_text(
        '[vault]\npaths = ["notes"]\n[chunking]\nmax_tokens = 64\noverlap = 0\n'
        '[embedder]\nprovider = "hash"\n[search]\nper_document = true\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["index"]) == 0
    capsys.readouterr()
    assert main(["search", "billing invoice retry", "-n", "3", "--mode", "keyword", "--json"]) == 0
    paths = [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]]
    assert len(paths) == len(set(paths)) == 3
    assert (
        main(
            [
                "search",
                "billing invoice retry",
                "-n",
                "3",
                "--mode",
                "keyword",
                "--per-chunk",
                "--json",
            ]
        )
        == 0
    )
    paths = [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]]
    assert paths == ["notes/runbook.md"] * 3


def test_the_mcp_tool_takes_per_document(memory: Memory) -> None:
    arguments = {"query": "billing invoice retry", "limit": 3, "per_document": True}
    result = Toolbox(memory).call("memory_search", arguments)
    assert result.ok and result.data is not None, result.text
    paths = [h["path"] for h in result.data["results"]]
    assert len(paths) == len(set(paths)) == 3
