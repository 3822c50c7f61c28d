"""``memory_search``'s ``subject`` and ``engram search --subject`` on the real SQLite store
(issue 36, point 1): subjects written in mixed case ("Caroline" given, "alice" read from the
text) are found whatever case the caller types, through the MCP SDK's client against a real
``engram mcp`` process and through the CLI, and another subject's memories never show."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from engram.memories.subjects import KEY_FIELD, KEYS_FIELD
from support import MemoryFactory, cli, cli_json

CONFIG = '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "engram.toml").write_text(CONFIG, encoding="utf-8")
    monkeypatch.chdir(root)
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-sqlite")
    return root


def _remember(capsys: pytest.CaptureFixture[str], text: str, *extra: str) -> dict[str, Any]:
    stored: dict[str, Any] = cli_json(capsys, "remember", text, "--type", "fact", *extra)
    return stored


def _memories(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    """Four memories about three subjects, their case mixed (``name`` → stored answer)."""
    return {
        "caroline": _remember(capsys, "Prefers window seats on flights.", "--subject", "Caroline"),
        "CAROLINE": _remember(capsys, "Prefers tea over coffee.", "--subject", "CAROLINE"),
        "alice": _remember(capsys, "Alice prefers aisle seats on flights."),
        "melanie": _remember(capsys, "Prefers seats by the exit.", "--subject", "melanie"),
    }


def _paths(capsys: pytest.CaptureFixture[str], query: str, *extra: str) -> set[str]:
    found = cli_json(capsys, "search", query, "--limit", "20", *extra)
    return {hit["path"] for hit in found["hits"]}


def test_engram_search_subject_any_case(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    stored = _memories(capsys)
    assert stored["alice"]["subject"] == "alice" and stored["caroline"]["subject"] == "Caroline"
    carolines = {stored["caroline"]["path"], stored["CAROLINE"]["path"]}
    everyone = {m["path"] for m in stored.values()}
    assert _paths(capsys, "prefers seats flights") >= everyone
    assert _paths(capsys, "prefers seats flights", "--subject", "caroline") == carolines
    assert _paths(capsys, "prefers", "--subject", "cAROLINE") == carolines
    assert _paths(capsys, "prefers seats", "--subject", "ALICE") == {stored["alice"]["path"]}
    assert _paths(capsys, "prefers seats", "--subject", "Bob") == set()
    # The same memories as `engram list --subject` gives.
    listed = {m["path"] for m in cli_json(capsys, "list", "--subject", "CaRoLiNe")}
    assert listed == carolines
    # The table face says so too, and a subject nobody has is an answer, not an error.
    code, out, _ = cli(capsys, "search", "window seats", "--subject", "Melanie")
    assert code == 0 and "1 results" in out and "exit" in out and "Prefers window" not in out
    code, out, _ = cli(capsys, "search", "window seats", "--subject", "nobody")
    assert code == 0 and "no results" in out


def test_memory_search_subject_through_the_mcp_client(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = _memories(capsys)
    carolines = {stored["caroline"]["path"], stored["CAROLINE"]["path"]}
    params = StdioServerParameters(
        # The test's isolated environment (its XDG_DATA_HOME, user config, plugin allow-list).
        command=sys.executable,
        args=["-m", "engram", "mcp"],
        cwd=str(project),
        env=dict(os.environ),
    )
    answers: dict[str, Any] = {}

    async def main() -> None:
        async with Client(params, read_timeout_seconds=180) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            schema = tools["memory_search"].input_schema["properties"]
            assert "subject" in schema
            for name, subject in [("car", "caroline"), ("ali", "Alice"), ("bob", "bob")]:
                arguments = {"query": "prefers seats flights tea", "limit": 20, "subject": subject}
                result = await client.call_tool("memory_search", arguments)
                assert not result.is_error and result.structured_content is not None
                answers[name] = result.structured_content["results"]
            bad = await client.call_tool("memory_search", {"query": "seats", "subject": ""})
            answers["empty"] = bad.is_error

    anyio.run(main)
    assert {h["path"] for h in answers["car"]} == carolines
    assert {h["subject"] for h in answers["car"]} == {"Caroline", "CAROLINE"}
    assert [(h["path"], h["subject"]) for h in answers["ali"]] == [
        (stored["alice"]["path"], "alice")
    ]
    assert answers["bob"] == [] and answers["empty"] is True


def test_a_memory_indexed_before_the_keys_needs_a_rebuild(open_memory: MemoryFactory) -> None:
    """What docs/memory-lifecycle.md says of memories indexed before ``subject_key`` existed:
    found by the subject as written, not in another case; ``engram index`` leaves the unchanged
    file unread (its stamp proves it unchanged), and a rebuild adds the keys."""
    memory = open_memory()  # SQLite, as every test of tests/
    stored = memory.remember("Prefers window seats on flights.", subject="Caroline")
    # The chunks as the previous version indexed them: the same, without the derived keys.
    old = [
        chunk.model_copy(
            update={
                "metadata": {
                    k: v for k, v in chunk.metadata.items() if k not in (KEY_FIELD, KEYS_FIELD)
                }
            }
        )
        for batch in memory.store.iter_chunks()
        for chunk in batch
        if chunk.document_id == stored.path
    ]
    assert old and all(c.vector is not None for c in old)
    memory.store.upsert(old)

    def found(subject: str) -> list[str]:
        return [h.chunk.document_id for h in memory.search("window seats", subject=subject).hits]

    assert found("caroline") == [] and found("Caroline") == [stored.path]
    report = memory.index()
    assert report.changed == 0 and found("caroline") == []
    memory.rebuild()
    assert found("caroline") == found("CAROLINE") == [stored.path]
