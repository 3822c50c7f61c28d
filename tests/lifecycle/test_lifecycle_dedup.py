"""Write-time dedup and contradiction, on real files, the real SQLite store and the real local
embedder (all-MiniLM-L6-v2): the constants are tuned for a semantic model, so they are tested
with one. (The write plan itself, with no model:
core/tests/lifecycle/test_lifecycle_dedup_plan.py.)"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_support import frontmatter
from engram.config import load_config
from engram.memories.files import memory_files
from engram.memory import Memory
from support import MemoryFactory


@pytest.fixture
def memory(open_memory: MemoryFactory) -> Memory:
    return open_memory(embedder="local")


def files(root: Path) -> list[Path]:
    return sorted(memory_files(root / "memory"))


def test_the_same_fact_reworded_leaves_one_file_updated(tmp_path: Path, memory: Memory) -> None:
    first = memory.remember(
        "The billing service stores invoices in PostgreSQL 15.", type="decision", tags=["db"]
    )
    second = memory.remember(
        "The billing service keeps its invoices in PostgreSQL 15.",
        type="decision",
        tags=["billing"],
        importance=2.0,
    )
    assert (first.action, second.action) == ("created", "updated")
    assert second.id == first.id and second.path == first.path
    assert files(tmp_path) == [tmp_path / first.path]
    meta = frontmatter(tmp_path / first.path)
    text = (tmp_path / first.path).read_text(encoding="utf-8")
    body = text.split("\n---\n", 1)[1]  # the earlier wording is history, not the text
    assert "keeps its invoices" in body and "stores invoices" not in body
    assert meta["tags"] == ["db", "billing"] and meta["importance"] == 2.0
    assert [r["wording"] for r in meta["revisions"]] == [
        "The billing service stores invoices in PostgreSQL 15."
    ]
    assert meta["revisions"][0]["why"] == "merged" and meta["updated_at"] >= meta["created_at"]
    entries = memory.history(first.id).entries
    assert [(e.kind, e.wording) for e in entries] == [
        ("revision", "The billing service stores invoices in PostgreSQL 15."),
        ("memory", "The billing service keeps its invoices in PostgreSQL 15."),
    ]
    hits = memory.search("where are billing invoices stored", mode="keyword").hits
    assert [h.chunk.document_id for h in hits] == [first.path]  # the index was updated too
    assert "keeps its invoices" in hits[0].chunk.text


def test_near_duplicates_of_another_type_or_scope_are_not_merged(
    tmp_path: Path, memory: Memory
) -> None:
    decision = memory.remember(
        "Deploys go out on Tuesdays after the change review.", type="decision"
    )
    note = memory.remember("Deploys go out every Tuesday, after the change review.", type="note")
    user = memory.remember(
        "Deploys go out every Tuesday, after the change review.", type="decision", scope="user"
    )
    assert {decision.action, note.action, user.action} == {"created"}
    assert len({decision.path, note.path, user.path}) == 3
    again = memory.remember(
        "Deploys go out every Tuesday after the change review.", type="decision"
    )
    assert again.action == "updated" and again.id == decision.id  # same type, same scope


def test_different_facts_are_both_kept(tmp_path: Path, memory: Memory) -> None:
    a = memory.remember("The API listens on port 8080 in staging.", type="project-config")
    b = memory.remember("Run the test suite with pytest -q before pushing.", type="project-config")
    assert (a.action, b.action) == ("created", "created") and len(files(tmp_path)) == 2


def test_a_contradicted_memory_is_superseded_kept_on_disk_and_left_out_of_search(
    tmp_path: Path, memory: Memory
) -> None:
    old = memory.remember("The user prefers tabs over spaces in Go code.", type="preference")
    new = memory.remember("The user prefers spaces over tabs in Go code.", type="preference")
    assert new.action == "created" and new.superseded == [old.id]
    old_meta, new_meta = frontmatter(tmp_path / old.path), frontmatter(tmp_path / new.path)
    assert old_meta["status"] == "superseded" and old_meta["superseded_by"] == new.id
    assert "superseded_at" in old_meta and new_meta["supersedes"] == [old.id]
    assert "prefers tabs over spaces" in (tmp_path / old.path).read_text(encoding="utf-8")

    def paths(include_superseded: bool = False) -> list[str]:
        found = memory.search("indentation in Go", include_superseded=include_superseded)
        return [h.chunk.document_id for h in found.hits]

    assert paths() == [new.path]
    assert set(paths(include_superseded=True)) == {old.path, new.path}
    assert [m.id for m in memory.list_memories(type="preference")] == [new.id]
    chain = memory.history(old.id).chain
    assert [m.id for m in chain] == [old.id, new.id]
    assert [m.status for m in chain] == ["superseded", "live"]
    memory.rebuild()
    assert paths() == [new.path]


def test_with_the_embedder_down_the_memory_is_written_with_a_warning(tmp_path: Path) -> None:
    embedder = {
        "provider": "openai",
        "api_key": "sk-test",
        "base_url": "http://127.0.0.1:9/v1",  # nothing listens on the discard port
        "max_retries": 0,
        "timeout": 2,
    }
    with Memory.open(load_config({"embedder": embedder}, start=tmp_path)) as memory:
        stored = memory.remember("Releases are tagged from main.", type="decision")
        # The same fact again, normalised text equal: merged by its hash, with no embedder.
        again = memory.remember("releases are tagged  from MAIN", type="decision")
    assert stored.action == "created" and (tmp_path / stored.path).is_file()
    assert any("without checking for near-duplicates" in w for w in stored.warnings)
    assert again.action == "updated" and again.id == stored.id
    assert files(tmp_path) == [tmp_path / stored.path]
    meta = frontmatter(tmp_path / stored.path)
    assert [r["wording"] for r in meta["revisions"]] == ["Releases are tagged from main."]
    assert meta["content_hash"].startswith("sha256:")


def test_the_agent_tools_merge_and_supersede_the_same_way(tmp_path: Path, memory: Memory) -> None:
    from engram.tools.toolbox import Toolbox

    tools = Toolbox(memory)
    first = tools.call(
        "memory_store", {"content": "Deploys go out on Tuesdays.", "type": "decision"}
    )
    again = tools.call(
        "memory_store", {"content": "Deploys go out every Tuesday.", "type": "decision"}
    )
    assert first.ok and again.ok and again.data is not None and first.data is not None
    assert again.data["action"] == "updated" and again.data["id"] == first.data["id"]
    assert again.text.startswith("Updated the memory holding the same fact")
    old = tools.call("memory_store", {"content": "The user prefers tabs.", "type": "preference"})
    new = tools.call(
        "memory_store", {"content": "The user prefers spaces over tabs.", "type": "preference"}
    )
    assert old.data is not None and new.data is not None
    assert new.data["superseded"] == [old.data["id"]] and "It supersedes" in new.text
    plain = tools.call("memory_search", {"query": "tabs or spaces preference"})
    history = tools.call(
        "memory_search", {"query": "tabs or spaces preference", "include_superseded": True}
    )
    assert plain.data is not None and history.data is not None
    assert {h["superseded"] for h in plain.data["results"]} == {False}
    assert any(h["superseded"] for h in history.data["results"])
