"""``memory_edit`` and ``memory_move`` (``engram.memories.lifecycle.editing``) on real files and the
built-in store: every wording an edit replaces is kept as a revision (a Hypothesis run of edits
can bring each back), a span must occur once, a move never replaces a file, and the index
follows both. And ``engram.tools.freshness``: a server's index follows files others write."""

from __future__ import annotations

from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.chunking import read_frontmatter
from engram.memories.files import wording_of
from engram.memories.lifecycle.revisions import revisions_of
from engram.tools.freshness import Freshness
from engram.tools.toolbox import Toolbox
from support import MemoryFactory


def _body(path: Path) -> str:
    fm = read_frontmatter(path.read_text(encoding="utf-8"))
    return wording_of(dict(fm.metadata), fm.body)


def test_span_and_body_edits_keep_each_wording(tmp_path: Path, open_memory: MemoryFactory) -> None:
    box = Toolbox(open_memory())
    stored = box.call("memory_store", {"content": "Deploys run on Tuesdays.", "type": "decision"})
    assert stored.ok and stored.data
    memory_id, path = stored.data["id"], tmp_path / stored.data["path"]

    twice = box.call("memory_store", {"content": "ab ab", "title": "Twice"})
    assert twice.ok and twice.data
    again = box.call("memory_edit", {"id": twice.data["id"], "old_text": "ab", "new_text": "c"})
    assert not again.ok and "occurs 2 times" in again.text

    span = box.call(
        "memory_edit",
        {"id": memory_id, "old_text": "Tuesdays", "new_text": "Fridays<private>pin 42</private>"},
    )
    assert span.ok, span.text
    assert _body(path) == "Deploys run on Fridays."  # what the edit brought in: no private span
    same = box.call("memory_edit", {"id": memory_id, "content": "Deploys run on Fridays."})
    assert same.ok and same.data and same.data["action"] == "unchanged"
    titled = box.call("memory_edit", {"id": memory_id, "title": "Deploy day"})
    assert titled.ok and titled.data and titled.data["title"] == "Deploy day"
    tagged = box.call("memory_edit", {"id": memory_id, "tags": ["ops"], "importance": 3})
    assert tagged.ok and tagged.data and tagged.data["action"] == "updated"
    assert [r.wording for r in revisions_of(path)] == [
        "Deploys run on Tuesdays.",
        "Deploys run on Fridays.",
    ]
    hits = box.call("memory_search", {"query": "deploys fridays", "tag": "ops"})
    assert hits.ok and hits.data and hits.data["results"][0]["path"] == stored.data["path"]


def test_a_move_never_replaces_a_file_and_can_change_scope(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    box = Toolbox(open_memory())
    a = box.call("memory_store", {"content": "Alpha fact.", "type": "fact"})
    b = box.call("memory_store", {"content": "Beta fact.", "type": "fact"})
    assert a.ok and b.ok and a.data and b.data
    taken = box.call("memory_move", {"id": a.data["id"], "to": b.data["path"].split("memory/")[1]})
    assert not taken.ok and "already exists" in taken.text
    assert (tmp_path / a.data["path"]).exists() and (tmp_path / b.data["path"]).exists()
    user = box.call("memory_move", {"id": a.data["id"], "to": "fact/alpha.md", "scope": "user"})
    assert user.ok and user.data, user.text
    assert user.data["scope"] == "user" and user.data["id"] == a.data["id"]
    assert not (tmp_path / a.data["path"]).exists()
    moved = Path(user.data["path"])
    assert moved.is_file() and "scope: user" in moved.read_text(encoding="utf-8")
    found = box.call("memory_search", {"query": "alpha fact", "scope": "user"})
    assert (
        found.ok
        and found.data
        and [h["path"] for h in found.data["results"]] == [user.data["path"]]
    )


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.text(
            alphabet=st.characters(codec="utf-8", exclude_categories=["Cs", "Cc"]),
            min_size=1,
            max_size=40,
        ).filter(lambda t: t.strip() and "<" not in t),
        min_size=1,
        max_size=4,
    )
)
def test_no_edit_loses_a_wording(
    tmp_path_factory: object, open_memory: MemoryFactory, texts: list[str]
) -> None:
    box = Toolbox(open_memory(), fresh=False)
    stored = box.call("memory_store", {"content": "The first wording.", "type": "note"})
    assert stored.ok and stored.data
    root = box.memory.config.root
    path = root / stored.data["path"]
    said = [_body(path)]
    for text in texts:
        result = box.call("memory_edit", {"id": stored.data["id"], "content": text})
        assert result.ok, result.text
        if _body(path) != said[-1]:
            said.append(_body(path))
    kept = [r.wording for r in revisions_of(path)]
    assert [*kept, _body(path)] == said
    box.call("memory_forget", {"id": stored.data["id"]})


def test_freshness_indexes_files_written_behind_the_server(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    fresh = Freshness()
    fresh.refresh(memory)
    runs = fresh.runs
    fresh.refresh(memory)  # nothing changed: no index run
    assert fresh.runs == runs
    note = tmp_path / "memory" / "note" / "x.md"
    note.parent.mkdir(parents=True, exist_ok=True)
    note.write_text("---\nid: 20250101-000000-abcdef\n---\nThe zebra crossing is red.\n")
    fresh.refresh(memory)
    assert fresh.runs == runs + 1
    hits = memory.search("zebra crossing red").hits
    assert [h.chunk.document_id for h in hits][:1] == ["memory/note/x.md"]
    # What a search writes (the access log in .engram/) is not a change: once its folder
    # exists (making it changed the memory folder's mtime: one more no-op run), a search and a
    # look cost no index run.
    fresh.refresh(memory)
    settled = fresh.runs
    for _ in range(3):
        assert memory.search("zebra crossing").hits
        fresh.refresh(memory)
    assert fresh.runs == settled
