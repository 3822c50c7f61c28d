"""The agent tools, called as every surface calls them: schemas from the pydantic models, results
with paths and spans, and every bad call a tool error that names the problem, never a crash
(a store failing under a tool: tests/agent/test_agent_tools_failing_store.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from engram.memory import Memory
from engram.tools.toolbox import TOOLS, MemorySearchInput, Toolbox
from support import MemoryFactory, write_vault

SECRET_FILE_TEXT = "root:x:0:0 the-outside-file"


@pytest.fixture
def box(tmp_path: Path, open_memory: MemoryFactory) -> Toolbox:
    write_vault(
        tmp_path,
        {
            "notes/deploy.md": "# Deploy\n\nRoll back a bad deploy with make rollback.\n",
            ".env": "API_KEY=sk-live-should-never-be-read\n",
            ".hidden/notes.md": "# Hidden\n\nnot for agents\n",
        },
    )
    memory: Memory = open_memory()
    memory.index()
    return Toolbox(memory)


def test_schemas_are_generated_from_the_input_models() -> None:
    assert set(TOOLS) == {
        "memory_search",
        "memory_store",
        "memory_get",
        "memory_edit",
        "memory_move",
        "memory_forget",
        "memory_list",
        "memory_history",
        "memory_recall",
        "memory_tags",
        "memory_recent",
        "memory_usage",
        "memory_stats",
        "memory_restore",
        "search",
        "fetch",
    }
    for tool in TOOLS.values():
        assert tool.input_schema() == tool.input.model_json_schema()
        assert tool.input_schema()["type"] == "object"
        assert tool.input_schema()["additionalProperties"] is False
        assert tool.description
    props = MemorySearchInput.model_json_schema()["properties"]
    assert set(props) == {
        "query",
        "limit",
        "source",
        "type",
        "subject",
        "scope",
        "tag",
        "since",
        "until",
        "include_superseded",
        "per_document",
    }


def test_store_search_get_list_stats_forget(box: Toolbox, tmp_path: Path) -> None:
    stored = box.call(
        "memory_store",
        {"content": "The payment webhook retries 5 times with backoff.", "type": "fact"},
    )
    assert stored.ok, stored.text
    assert stored.data is not None
    path = stored.data["path"]
    found = box.call("memory_search", {"query": "payment webhook retries", "source": "memory"})
    assert found.ok and found.data is not None
    hit = found.data["results"][0]
    assert hit["path"] == path and hit["source"] == "memory" and hit["type"] == "fact"
    assert hit["start_line"] >= 1 and hit["end_line"] >= hit["start_line"] and hit["score"] > 0
    assert "retries 5 times" in hit["snippet"]
    assert f"[1] {path}" in found.text

    typed = box.call("memory_search", {"query": "payment webhook", "type": "decision"})
    assert typed.ok and typed.data is not None and typed.data["results"] == []

    got = box.call("memory_get", {"path": hit["path"], "start_line": hit["start_line"]})
    assert got.ok and got.data is not None and "retries 5 times" in got.data["text"]

    listed = box.call("memory_list", {"type": "fact"})
    assert listed.ok and listed.data is not None
    assert [m["path"] for m in listed.data["memories"]] == [path]

    stats = box.call("memory_stats", {})
    assert stats.ok and stats.data is not None
    assert stats.data["memories_by_type"] == {"fact": 1}
    assert stats.data["documents_by_source"] == {"memories": 1, "vault notes": 1}

    gone = box.call("memory_forget", {"id": stored.data["id"]})
    assert gone.ok and gone.data == {"removed": [path]}
    after = box.call("memory_search", {"query": "payment webhook retries"})
    assert after.ok and after.data is not None and after.data["results"] == []
    assert not (tmp_path / path).exists()


def test_vault_notes_are_readable_with_line_ranges(box: Toolbox) -> None:
    got = box.call("memory_get", {"path": "notes/deploy.md", "start_line": 3, "end_line": 3})
    assert got.ok and got.data is not None
    assert got.data["text"] == "Roll back a bad deploy with make rollback."
    assert (got.data["start_line"], got.data["end_line"], got.data["total_lines"]) == (3, 3, 3)
    past = box.call("memory_get", {"path": "notes/deploy.md", "start_line": 9})
    assert not past.ok and "has 3 lines" in past.text
    backwards = box.call("memory_get", {"path": "notes/deploy.md", "start_line": 3, "end_line": 2})
    assert not backwards.ok and "end_line must not be before start_line" in backwards.text


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"query": ""}, "query"),
        ({"query": "x", "limit": 0}, "limit"),
        ({"query": "x", "source": "everything"}, "source"),
        ({"query": "x", "bogus": 1}, "unknown argument"),
    ],
)
def test_invalid_arguments_are_tool_errors(
    box: Toolbox, arguments: dict[str, object], message: str
) -> None:
    result = box.call("memory_search", arguments)
    assert not result.ok and "invalid arguments" in result.text and message in result.text


def test_unknown_tool_lists_the_real_ones(box: Toolbox) -> None:
    result = box.call("memory_delete_everything", {})
    assert not result.ok and "memory_forget" in result.text


ESCAPES = [
    "../outside/secret.md",
    "notes/../../outside/secret.md",
    "OUTSIDE_ABS",
    "..\\outside\\secret.md",
    "C:\\Windows\\system.ini",
    "notes/deploy.md\x00.txt",
    "notes/link/secret.md",
]


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A file next to the project (not in it) and a symlink from the vault pointing at it."""
    folder = tmp_path.parent / f"{tmp_path.name}-outside"
    folder.mkdir()
    (folder / "secret.md").write_text(SECRET_FILE_TEXT, encoding="utf-8")
    os.symlink(folder, tmp_path / "notes" / "link")
    (tmp_path / "memory").mkdir(exist_ok=True)
    os.symlink(folder, tmp_path / "memory" / "link")
    return folder / "secret.md"


def _path(raw: str, outside: Path) -> str:
    return str(outside) if raw == "OUTSIDE_ABS" else raw


@pytest.mark.parametrize("raw", ESCAPES)
def test_memory_get_refuses_every_escape(box: Toolbox, outside: Path, raw: str) -> None:
    result = box.call("memory_get", {"path": _path(raw, outside)})
    assert not result.ok and "refused" in result.text, result.text
    assert SECRET_FILE_TEXT not in result.text


@pytest.mark.parametrize("raw", [*ESCAPES, "memory/link/secret.md", "link/secret.md"])
def test_memory_forget_refuses_every_escape(box: Toolbox, outside: Path, raw: str) -> None:
    result = box.call("memory_forget", {"id": _path(raw, outside)})
    assert not result.ok and "refused" in result.text, result.text
    assert outside.read_text(encoding="utf-8") == SECRET_FILE_TEXT


@pytest.mark.parametrize(
    "raw", [*ESCAPES[:2], "OUTSIDE_ABS", *ESCAPES[3:6], "link/new", ".hidden/x"]
)
def test_memory_store_refuses_every_escape(box: Toolbox, outside: Path, raw: str) -> None:
    result = box.call("memory_store", {"content": "escape attempt", "path": _path(raw, outside)})
    assert not result.ok and "refused" in result.text, result.text
    assert sorted(p.name for p in outside.parent.iterdir()) == ["secret.md"]


@pytest.mark.parametrize("raw", [".env", ".hidden/notes.md", ".engram/index.sqlite"])
def test_memory_get_never_reads_secrets_or_the_index(box: Toolbox, raw: str) -> None:
    result = box.call("memory_get", {"path": raw})
    assert not result.ok and "refused" in result.text, result.text
    assert "sk-live" not in result.text


def test_memories_carry_their_subject_and_list_by_it(box: Toolbox, tmp_path: Path) -> None:
    """The subject read from the content (a name anywhere) or given, in the file and as a
    filter of memory_list: another person's fact is never in the list, any case matches."""
    alice = box.call("memory_store", {"content": "Alice lives in Paris.", "type": "fact"})
    bob = box.call(
        "memory_store", {"content": "Lives near the station.", "type": "fact", "subject": "Bob"}
    )
    assert alice.ok and bob.ok and alice.data is not None and bob.data is not None
    assert "subject: Bob" in (tmp_path / bob.data["path"]).read_text(encoding="utf-8")
    for asked, expected in (("alice", alice), ("BOB", bob)):
        listed = box.call("memory_list", {"subject": asked})
        assert listed.ok and listed.data is not None, listed.text
        assert [m["id"] for m in listed.data["memories"]] == [expected.data["id"]]  # type: ignore[index]
    assert box.call("memory_list", {"subject": "carol"}).data["memories"] == []  # type: ignore[index]
