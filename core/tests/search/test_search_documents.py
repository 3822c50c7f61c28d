"""``per_document``: one hit per file, so ``limit`` counts files even when one long file's
chunks would fill the ranking (Memory and the MCP tool; the CLI flag:
tests/cli/test_search_documents_cli.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.memory import Memory
from engram.models import SearchMode
from engram.tools.toolbox import Toolbox
from support import MemoryFactory, write_billing_vault


@pytest.fixture
def memory(tmp_path: Path, open_memory: MemoryFactory) -> Memory:
    write_billing_vault(tmp_path)
    m = open_memory(
        vault={"paths": ["notes"]},
        chunking={"max_tokens": 64, "overlap": 0},
        search={"min_score": 0.0},
    )
    m.index()
    return m


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_limit_counts_documents_when_asked(memory: Memory, mode: SearchMode) -> None:
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


def test_the_mcp_tool_takes_per_document(memory: Memory) -> None:
    arguments = {"query": "billing invoice retry", "limit": 3, "per_document": True}
    result = Toolbox(memory).call("memory_search", arguments)
    assert result.ok and result.data is not None, result.text
    paths = [h["path"] for h in result.data["results"]]
    assert len(paths) == len(set(paths)) == 3
