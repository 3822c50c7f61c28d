"""Write-time dedup and contradiction, on real files, the real SQLite store and the real local
embedder (all-MiniLM-L6-v2): the constants are tuned for a semantic model, so they are tested
with one."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_support import frontmatter
from engram.config import LifecycleConfig, load_config
from engram.lifecycle.dedup import Neighbour, plan_write
from engram.memory import Memory
from engram.memory_files import memory_files
from engram.models import ExtractedMemory, KnownMemory
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
    assert "keeps its invoices" in text and "stores invoices" not in text
    assert meta["tags"] == ["db", "billing"] and meta["importance"] == 2.0
    assert meta["revisions"] == 1 and meta["updated_at"] >= meta["created_at"]
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

    def paths(**kw: bool) -> list[str]:
        return [h.chunk.document_id for h in memory.search("indentation in Go", **kw).hits]

    assert paths() == [new.path]
    assert set(paths(include_superseded=True)) == {old.path, new.path}
    assert [m.id for m in memory.list_memories(type="preference")] == [new.id]
    chain = memory.history(old.id).chain
    assert [m.id for m in chain] == [old.id, new.id]
    assert [m.status for m in chain] == ["superseded", "live"]
    memory.rebuild()
    assert paths() == [new.path]


def test_a_reversal_is_never_merged_as_a_duplicate() -> None:
    """The seed skipped the contradiction check for near-duplicates; a reversal is one."""
    rules = LifecycleConfig()
    old = KnownMemory(id="a", type="preference", content="The user prefers tabs.")
    close = Neighbour(id="a", document_id="m/a.md", type="preference", distance=0.01, memory=old)

    class Judge:
        name = "judge"

        def extract(self, messages: object, mode: str = "normal") -> list[ExtractedMemory]:
            return []

        def find_contradictions(
            self, new: ExtractedMemory, candidates: list[KnownMemory]
        ) -> list[str]:
            return [c.id for c in candidates]

    new = ExtractedMemory(type="preference", content="The user prefers spaces.")
    plan = plan_write(new, [close], rules, Judge())  # type: ignore[arg-type]
    assert plan.duplicate is None and [n.id for n in plan.stale] == ["a"]
    plan = plan_write(new, [close], rules, None)
    assert plan.duplicate is close and plan.stale == []


def test_structural_types_use_the_wider_thresholds() -> None:
    rules = LifecycleConfig()
    assert rules.duplicate_limit("architecture") == 0.25
    assert rules.duplicate_limit("preference") == 0.12
    assert rules.contradiction_limit("project-brief") == 0.75
    assert rules.contradiction_limit("decision") == 0.5
    near = KnownMemory(id="b", type="architecture", content="x")
    neighbour = Neighbour(
        id="b", document_id="m/b.md", type="architecture", distance=0.2, memory=near
    )
    plan = plan_write(ExtractedMemory(type="architecture", content="y"), [neighbour], rules, None)
    assert plan.duplicate is neighbour
    plan = plan_write(ExtractedMemory(type="decision", content="y"), [neighbour], rules, None)
    assert plan.duplicate is None


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
    assert stored.action == "created" and (tmp_path / stored.path).is_file()
    assert any("without checking for duplicates" in w for w in stored.warnings)


def test_the_agent_tools_merge_and_supersede_the_same_way(tmp_path: Path, memory: Memory) -> None:
    from engram.tools import Toolbox

    tools = Toolbox(memory)
    first = tools.call(
        "memory_store", {"content": "Deploys go out on Tuesdays.", "type": "decision"}
    )
    again = tools.call(
        "memory_store", {"content": "Deploys go out every Tuesday.", "type": "decision"}
    )
    assert first.ok and again.ok and again.data is not None and first.data is not None
    assert again.data["action"] == "updated" and again.data["id"] == first.data["id"]
    assert again.text.startswith("Updated the near-duplicate memory")
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
