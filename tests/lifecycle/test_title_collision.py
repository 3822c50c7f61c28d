"""A new memory whose file name is taken (``on_collision``): ``new`` keeps both, ``update`` makes
the new text a revision of the memory in that file (never losing the old text), ``fail``
refuses with the file and the choices named. Through the API, the ``[memory]`` setting, the real
CLI and the MCP tool, on the real SQLite store."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import anyio
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from agent_support import frontmatter
from engram import Memory
from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory
from engram.mcp import build_server
from engram.memories.files import memory_files, with_frontmatter, wording_of
from engram.memories.lifecycle.revisions import revisions_of
from engram.tools.toolbox import Toolbox
from support import MemoryFactory, cli, cli_json, memory_factory

FIRST = "The staging database is refreshed from production every Sunday night."
THIRD = "Redis holds the session cache, evicted after one hour of inactivity."
SECOND = "Kubernetes ingress certificates renew automatically through cert-manager."


def _files(memory: Memory) -> list[Path]:
    return sorted(memory_files(memory.config.resolve(memory.config.memory.dir)))


def _every_wording(memory: Memory) -> list[str]:
    """Every text held by every memory file: its current wording and its revisions."""
    out = []
    for path in _files(memory):
        parsed = read_frontmatter(path.read_text(encoding="utf-8"))
        out.append(wording_of(dict(parsed.metadata), parsed.body))
        out.extend(r.wording for r in revisions_of(path))
    return out


def test_new_is_the_default_and_keeps_both(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    one = memory.remember(FIRST, title="Infra note")
    two = memory.remember(SECOND, title="Infra note")
    assert one.path == "memory/note/infra-note.md"
    assert two.path == "memory/note/infra-note-2.md"
    assert two.action == "created" and one.id != two.id


def test_update_rewords_the_memory_and_keeps_the_old_text(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    one = memory.remember(FIRST, title="Infra note", tags=["db"])
    two = memory.remember(SECOND, title="Infra note", tags=["k8s"], on_collision="update")
    assert two.action == "updated"
    assert (two.id, two.path) == (one.id, one.path)
    assert len(_files(memory)) == 1
    path = memory.config.root / one.path
    meta = frontmatter(path)
    assert meta["tags"] == ["db", "k8s"]
    [kept] = revisions_of(path)
    assert (kept.wording, kept.why, kept.title) == (FIRST, "updated", "Infra note")
    assert SECOND in path.read_text(encoding="utf-8")
    hits = memory.search("cert-manager ingress certificates", limit=1).hits
    assert hits and hits[0].chunk.document_id == one.path
    # The old text comes back with restore, like any edit.
    restored = memory.restore(one.id or "")
    assert FIRST in (memory.config.root / restored.path).read_text(encoding="utf-8")


def test_update_of_a_superseded_memory_writes_a_new_one(open_memory: MemoryFactory) -> None:
    """Its wording is history search no longer shows: the new text must be live."""
    memory = open_memory()
    one = memory.remember(FIRST, title="Infra note")
    path = memory.config.root / one.path
    path.write_text(
        with_frontmatter(path.read_text(encoding="utf-8"), {"status": "superseded"}),
        encoding="utf-8",
    )
    two = memory.remember(SECOND, title="Infra note", on_collision="update")
    assert two.action == "created" and two.path == "memory/note/infra-note-2.md"
    assert FIRST in path.read_text(encoding="utf-8") and revisions_of(path) == []


def test_update_with_the_same_text_changes_nothing(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    one = memory.remember(FIRST, title="Infra note")
    again = memory.remember(FIRST, title="Infra note", on_collision="update")
    assert again.id == one.id and len(_files(memory)) == 1
    assert revisions_of(memory.config.root / one.path) == []


def test_fail_names_the_file_and_the_choices_and_writes_nothing(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory()
    one = memory.remember(FIRST, title="Infra note")
    before = (memory.config.root / one.path).read_text(encoding="utf-8")
    with pytest.raises(InvalidMemory) as caught:
        memory.remember(SECOND, title="Infra note", on_collision="fail")
    said = str(caught.value)
    assert "memory/note/infra-note.md already exists" in said
    assert all(word in said for word in ("update", "new", "another title"))
    assert len(_files(memory)) == 1
    assert (memory.config.root / one.path).read_text(encoding="utf-8") == before
    assert not memory.search("cert-manager", mode="keyword").hits


def test_the_memory_setting_is_the_default_and_a_call_overrides_it(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(memory={"on_collision": "fail"})
    memory.remember(FIRST, title="Infra note")
    with pytest.raises(InvalidMemory, match="already exists"):
        memory.remember(SECOND, title="Infra note")
    kept = memory.remember(SECOND, title="Infra note", on_collision="new")
    assert kept.path == "memory/note/infra-note-2.md"
    # An explicit path collides the same way.
    memory.remember(THIRD, path="notes/db", title="x")
    with pytest.raises(InvalidMemory, match=r"memory/notes/db\.md already exists"):
        memory.remember("Another text entirely about queues.", path="notes/db", title="y")


def test_an_unknown_choice_is_refused(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    with pytest.raises(InvalidMemory, match="unknown on_collision 'maybe'"):
        memory.remember(FIRST, on_collision="maybe")  # type: ignore[arg-type]
    assert _files(memory) == []


def test_cli_on_collision(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    one = cli_json(capsys, "remember", FIRST, "--title", "Infra note")
    two = cli_json(capsys, "remember", SECOND, "--title", "Infra note", "--on-collision", "update")
    assert (two["id"], two["path"], two["action"]) == (one["id"], one["path"], "updated")
    code, out, err = cli(
        capsys, "remember", "More.", "--title", "Infra note", "--on-collision", "fail"
    )
    assert code == 1 and not out
    assert "memory/note/infra-note.md already exists" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    code, out, err = cli(capsys, "remember", "More.", "--on-collision", "maybe")
    assert code == 2 and "maybe" in err and "Traceback" not in err
    code, out, _ = cli(capsys, "remember", "More.", "--title", "Infra note")
    assert code == 0 and "memory/note/infra-note-2.md" in out


def test_mcp_memory_store_on_collision(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    server = build_server(Toolbox(memory))
    got: dict[str, Any] = {}

    async def main() -> None:
        async with Client(server) as client:
            args = {"title": "Infra note"}
            got["one"] = await client.call_tool("memory_store", {"content": FIRST, **args})
            got["two"] = await client.call_tool(
                "memory_store", {"content": SECOND, "on_collision": "update", **args}
            )
            got["fail"] = await client.call_tool(
                "memory_store", {"content": "More.", "on_collision": "fail", **args}
            )
            got["bad"] = await client.call_tool(
                "memory_store", {"content": "More.", "on_collision": "maybe", **args}
            )

    anyio.run(main)
    one, two = got["one"].structured_content, got["two"].structured_content
    assert (two["id"], two["path"], two["action"]) == (one["id"], one["path"], "updated")
    fail_text = "\n".join(getattr(b, "text", "") for b in got["fail"].content)
    assert got["fail"].is_error and "memory/note/infra-note.md already exists" in fail_text
    assert "Traceback" not in fail_text
    assert got["bad"].is_error
    assert [r.wording for r in revisions_of(memory.config.root / one["path"])] == [FIRST]
    assert len(_files(memory)) == 1


WORDS = st.text(alphabet="abcdefgh ", min_size=1, max_size=40).filter(lambda t: t.strip())


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(texts=st.lists(WORDS, min_size=1, max_size=5))
def test_update_never_loses_a_text(texts: list[str]) -> None:
    """Whatever is written under one title with ``update``, every text stays in the memory
    folder: as the current wording of a memory or as one of its revisions."""
    with tempfile.TemporaryDirectory() as tmp, memory_factory(Path(tmp), "sqlite") as factory:
        memory = factory(memory={"on_collision": "update"})
        for text in texts:
            memory.remember(text, title="Shared title")
        kept = _every_wording(memory)
        for text in texts:
            assert text.strip() in kept
