"""Memories as markdown files: written atomically with frontmatter, indexed at once, listed by
metadata, forgotten file and chunks together, recreated by a rebuild."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_support import chunks_of, count_source, frontmatter
from engram.errors import UnsafePath
from engram.memories.agent import MEMORY_ID, InvalidMemory, MemoryNotFound, remember
from engram.memories.files import slugify, write_new_file
from support import MemoryFactory, write_vault


def test_remember_writes_frontmatter_in_a_type_folder_and_is_searchable_at_once(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    stored = memory.remember(
        "We settled on PostgreSQL for the ledger service because of serializable transactions.",
        title="Ledger database",
        type="decision",
        scope="project",
        tags=["db", "ledger", "db"],
    )
    path = tmp_path / stored.path
    assert stored.path == "memory/decision/ledger-database.md" and path.is_file()
    meta = frontmatter(path)
    assert meta["id"] == stored.id and MEMORY_ID.match(stored.id)
    assert (meta["type"], meta["scope"], meta["tags"], meta["source"]) == (
        "decision",
        "project",
        ["db", "ledger"],
        "agent",
    )
    assert datetime.fromisoformat(meta["created_at"]).tzinfo is not None
    assert "# Ledger database" in path.read_text(encoding="utf-8")
    hits = memory.search("ledger serializable transactions", mode="keyword").hits
    assert hits and hits[0].chunk.document_id == stored.path
    assert hits[0].chunk.metadata["type"] == "decision"
    assert stored.chunks == len(chunks_of(memory, stored.path)) >= 1


def test_same_title_twice_never_overwrites(tmp_path: Path, open_memory: MemoryFactory) -> None:
    memory = open_memory()
    # Two different rules under one title (a near-duplicate would be merged instead).
    first = memory.remember(
        "Deploys need two approvals from the on-call team.", title="Deploy rule"
    )
    second = memory.remember(
        "Rollbacks always go through the release channel.", title="Deploy rule"
    )
    assert first.path == "memory/note/deploy-rule.md"
    assert second.path == "memory/note/deploy-rule-2.md"
    assert "two approvals" in (tmp_path / first.path).read_text(encoding="utf-8")
    assert "release channel" in (tmp_path / second.path).read_text(encoding="utf-8")
    leftovers = [p.name for p in (tmp_path / "memory" / "note").iterdir() if p.suffix != ".md"]
    assert leftovers == [], "a temp file was left behind"


@settings(max_examples=40, deadline=None)
@given(names=st.lists(st.sampled_from(["a", "b", "c"]), min_size=1, max_size=8))
def test_write_new_file_keeps_every_existing_file_intact(
    tmp_path_factory: pytest.TempPathFactory, names: list[str]
) -> None:
    folder = tmp_path_factory.mktemp("atomic")
    written: dict[Path, str] = {}
    for i, stem in enumerate(names):
        path = write_new_file(folder, stem, f"content {i}\n")
        assert path not in written
        written[path] = f"content {i}\n"
    assert {p: p.read_text(encoding="utf-8") for p in written} == written
    assert sorted(p.name for p in folder.iterdir()) == sorted(p.name for p in written)


def test_slugs_are_portable() -> None:
    assert slugify("Ünïcödé & <weird>/names\\here") == "unicode-weird-names-here"
    assert slugify("///") == "memory"
    assert slugify("NUL") == "nul-memory"
    assert len(slugify("word " * 40)) <= 60


def test_untitled_memory_takes_its_first_line_without_repeating_it(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    stored = memory.remember("Always run the linter before pushing.\n\nIt catches import cycles.")
    assert stored.title == "Always run the linter before pushing."
    body = (tmp_path / stored.path).read_text(encoding="utf-8").split("---\n", 2)[2]
    assert body.count("Always run the linter") == 1


def test_empty_or_mistyped_memories_are_refused_with_a_fix(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    with pytest.raises(InvalidMemory, match="give it some content"):
        memory.remember("  <private>only a secret</private>  ")
    with pytest.raises(InvalidMemory, match="use one of project-brief, architecture"):
        memory.remember("x", type="../../etc")  # type: ignore[arg-type]
    with pytest.raises(InvalidMemory, match="user, project"):
        memory.remember("x", scope="team")  # type: ignore[arg-type]
    with pytest.raises(InvalidMemory, match="longer than 64"):
        memory.remember("x", tags=["t" * 65])
    assert memory.list_memories() == []


def test_forget_by_id_removes_the_file_and_every_chunk(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    long_text = "\n\n".join(
        f"## Part {i}\n\n" + " ".join(f"topic{i}word{j}" for j in range(120)) for i in range(4)
    )
    stored = memory.remember(long_text, title="Long memory", type="fact")
    other = memory.remember("an unrelated memory about espresso machines", title="Coffee")
    assert len(chunks_of(memory, stored.path)) > 1
    assert memory.forget(stored.id) == [stored.path]
    assert not (tmp_path / stored.path).exists()
    assert chunks_of(memory, stored.path) == []
    assert stored.path not in memory.store.list_documents()
    assert memory.search("topic2word7", mode="keyword").hits == []
    assert chunks_of(memory, other.path), "forgetting one memory touched another"


def test_forget_by_path_and_unknown_ids(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    stored = memory.remember("kubernetes ingress uses nginx", title="Ingress")
    assert memory.forget(stored.path) == [stored.path]
    with pytest.raises(MemoryNotFound, match="engram list"):
        memory.forget(stored.id)
    with pytest.raises(MemoryNotFound):
        memory.forget("memory/note/never-existed.md")


def test_forget_refuses_files_outside_the_memory_folder(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    memory.remember("something", title="x")
    note = write_vault(tmp_path, {"notes/keep.md": "# Keep me\n"}) / "notes" / "keep.md"
    with pytest.raises(UnsafePath, match="outside the memory folder"):
        memory.forget("notes/keep.md")
    assert note.exists()


def test_list_filters_by_type_scope_tag_and_date(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    jan = datetime(2025, 1, 10, 12, tzinfo=UTC)
    mar = datetime(2025, 3, 5, 12, tzinfo=UTC)
    remember(
        memory.writer, "tabs over spaces", type="preference", scope="user", tags=["style"], now=jan
    )
    remember(memory.writer, "use uv for python", type="decision", tags=["python"], now=mar)
    remember(memory.writer, "rust editions", type="fact", tags=["style", "rust"], now=mar)
    titles = [m.title for m in memory.list_memories()]
    assert titles[-1] == "tabs over spaces" and len(titles) == 3  # newest first
    assert [m.title for m in memory.list_memories(type="decision")] == ["use uv for python"]
    assert [m.title for m in memory.list_memories(scope="user")] == ["tabs over spaces"]
    assert {m.title for m in memory.list_memories(tag="style")} == {
        "tabs over spaces",
        "rust editions",
    }
    assert [m.title for m in memory.list_memories(until="2025-02-01")] == ["tabs over spaces"]
    assert len(memory.list_memories(since="2025-03-01")) == 2
    assert len(memory.list_memories(limit=1)) == 1
    with pytest.raises(InvalidMemory, match="ISO date"):
        memory.list_memories(since="last tuesday")


def test_rebuild_recreates_memories_from_markdown_even_in_a_hidden_folder(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory(memory={"dir": ".agent-memory"}, vault={"paths": ["notes"]})
    write_vault(tmp_path, {"notes/a.md": "# A\n\nalpha note\n"})
    memory.index()
    stored = memory.remember("the staging cluster lives in eu-west-3", title="Staging")
    assert stored.path.startswith(".agent-memory/")
    again = memory.index()
    assert again.removed == 0 and again.unchanged == 2, "a full index dropped the memory"
    memory.store.reset()
    assert memory.store.count() == 0
    report = memory.rebuild()
    assert report.new == 2
    hits = memory.search("staging cluster eu-west-3", mode="keyword").hits
    assert hits and hits[0].chunk.document_id == stored.path
    assert count_source(memory, "memory") >= 1 and count_source(memory, "vault") >= 1


def test_store_path_stays_inside_the_memory_folder(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    stored = memory.remember("custom place", path="projects/engram/notes")
    assert stored.path == "memory/projects/engram/notes.md"
    for bad in ("../escape", "/tmp/abs", "a/../../b", "a\\b", ".hidden/x", "nul\x00byte"):
        with pytest.raises(UnsafePath):
            memory.remember("nope", path=bad)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    os.symlink(outside, tmp_path / "memory" / "link")
    with pytest.raises(UnsafePath, match="outside the memory folder"):
        memory.remember("through a symlink", path="link/x")
    assert list(outside.iterdir()) == []


def test_memory_files_lists_no_file_a_link_leads_out_to(tmp_path: Path) -> None:
    """A linked file pointing outside the folder, or a linked folder, is never listed (nor
    merged into, nor indexed as a memory); a link to a file inside the folder is."""
    from engram.memories.files import memory_files

    folder = tmp_path / "memory"
    (folder / "notes").mkdir(parents=True)
    (folder / "notes" / "a.md").write_text("inside")
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "secret.md").write_text("outside")
    os.symlink(outside / "secret.md", folder / "notes" / "secret.md")
    os.symlink(outside, folder / "linked")
    os.symlink(folder / "notes" / "a.md", folder / "alias.md")
    assert sorted(p.relative_to(folder).as_posix() for p in memory_files(folder)) == [
        "alias.md",
        "notes/a.md",
    ]
