"""The lossless write path on the real SQLite store with the hash embedder: a merge keeps the
earlier wording, a restore brings any version back (a superseded memory comes back live and
linked ``conflicts_with`` to its superseder, the newer shown first), one-way links are
completed by the next index, and no sequence of writes ever loses a stored wording."""

from __future__ import annotations

import contextlib
import tempfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from agent_support import frontmatter
from engram.chunking import read_frontmatter
from engram.errors import InvalidMemory
from engram.memories.files import memory_files, with_frontmatter, wording_of
from engram.memories.lifecycle.revisions import revisions_of
from engram.memory import Memory
from engram.models import Message
from engram.tools.toolbox import Toolbox
from support import MemoryFactory, memory_factory


@pytest.fixture
def memory(open_memory: MemoryFactory) -> Memory:
    return open_memory()


def wordings(root: Path) -> set[str]:
    """Every wording on disk: each memory's text and each of its revisions."""
    out: set[str] = set()
    for path in memory_files(root / "memory"):
        fm = read_frontmatter(path.read_text(encoding="utf-8"))
        out.add(wording_of(dict(fm.metadata), fm.body))
        out.update(r.wording for r in revisions_of(path))
    return out


def texts(memory: Memory, query: str, **kwargs: object) -> list[str]:
    hits = memory.search(query, mode="keyword", **kwargs).hits  # type: ignore[arg-type]
    return [h.chunk.text.strip() for h in hits]


def test_a_merge_keeps_the_earlier_wording_out_of_search_and_restore_brings_it_back(
    tmp_path: Path, memory: Memory
) -> None:
    first = memory.remember("Releases are tagged from main.", type="decision")
    again = memory.remember("RELEASES are tagged from main", type="decision")
    assert again.action == "updated" and again.id == first.id
    assert again.revision_count == 1
    path = tmp_path / first.path
    assert [(r.wording, r.why) for r in revisions_of(path)] == [
        ("Releases are tagged from main.", "merged")
    ]
    # The revision is history: search returns the current wording only (one hit, one file).
    assert texts(memory, "releases tagged main") == ["RELEASES are tagged from main"]
    restored = memory.restore(first.id, 1)
    assert restored.action == "restored" and restored.id == first.id
    assert [r.wording for r in revisions_of(path)] == [
        "Releases are tagged from main.",
        "RELEASES are tagged from main",  # what the restore replaced: kept, restorable
    ]
    assert texts(memory, "releases tagged main") == ["Releases are tagged from main."]
    assert frontmatter(path)["content_hash"].startswith("sha256:")
    memory.rebuild()
    assert texts(memory, "releases tagged main") == ["Releases are tagged from main."]
    entries = memory.history(first.id).entries
    assert [e.wording for e in entries] == [
        "Releases are tagged from main.",
        "RELEASES are tagged from main",
        "Releases are tagged from main.",
    ]
    assert [e.revision for e in entries] == [1, 2, None]


def test_restore_refuses_what_it_cannot_do_and_says_how(memory: Memory) -> None:
    one = memory.remember("The staging database is Postgres.", type="fact")
    with pytest.raises(InvalidMemory, match="no earlier wording"):
        memory.restore(one.id)
    memory.remember("the staging database is postgres", type="fact")
    with pytest.raises(InvalidMemory, match="between 1 and 1"):
        memory.restore(one.id, 3)


def test_restoring_a_superseded_memory_makes_both_live_linked_newest_first(
    tmp_path: Path, memory: Memory
) -> None:
    old = memory.remember("The API listens on port 8001.", type="project-config")
    new = memory.remember("The API listens on port 8002.", type="project-config")
    assert new.superseded == [old.id]
    assert texts(memory, "API listens port") == ["The API listens on port 8002."]
    back = memory.restore(old.id)
    assert back.live and back.conflicts_with == [new.id]
    new_meta = frontmatter(tmp_path / new.path)
    assert "supersedes" not in new_meta and new_meta["conflicts_with"] == [old.id]
    memory.index()  # the repair must not supersede it again: supersedes no longer names it
    found = memory.search("API listens port", mode="keyword").hits
    assert [h.chunk.metadata["id"] for h in found] == [new.id, old.id]  # newest first
    listed = {m.id: m for m in memory.list_memories()}
    assert listed[old.id].conflicts_with == [new.id] and listed[new.id].live
    out = Toolbox(memory).call("memory_search", {"query": "API listens port"})
    assert out.ok and out.data is not None
    assert [h["conflicts_with"] for h in out.data["results"]] == [[old.id], []]
    assert f"(conflicts with an older memory: {old.id})" in out.text
    recall = memory.recall("API listens port")
    assert f"(conflicts with an older memory: {old.id})" in recall.text
    chain = memory.history(new.id).chain
    assert [m.id for m in chain] == [old.id, new.id]


def test_the_restore_tool_brings_a_revision_back(memory: Memory) -> None:
    tools = Toolbox(memory)
    first = tools.call("memory_store", {"content": "Deploys go out on Tuesdays."})
    assert first.ok and first.data is not None
    tools.call("memory_store", {"content": "deploys go out on tuesdays"})
    back = tools.call("memory_restore", {"id": first.data["id"], "revision": 1})
    assert back.ok and back.data is not None and back.data["action"] == "restored"
    assert back.text.startswith(f"Restored memory {first.data['id']}")
    bad = tools.call("memory_restore", {"id": first.data["id"], "revision": 9})
    assert not bad.ok and "between 1 and 2" in bad.text


def test_index_completes_a_one_way_link_and_a_half_done_supersede(
    tmp_path: Path, memory: Memory
) -> None:
    a = memory.remember("The cache lives in Redis.", type="fact")
    b = memory.remember("Session tokens expire after one hour.", type="fact")
    c = memory.remember("Logs are shipped to Loki.", type="fact")
    # What a crash between the two files of a write leaves: only the newer side written.
    for path, changes in (
        (b.path, {"conflicts_with": [a.id]}),
        (c.path, {"supersedes": [b.id]}),
    ):
        file = tmp_path / path
        file.write_text(with_frontmatter(file.read_text(encoding="utf-8"), changes), "utf-8")
    memory.index()
    assert frontmatter(tmp_path / a.path)["conflicts_with"] == [b.id]
    old = frontmatter(tmp_path / b.path)
    assert old["status"] == "superseded" and old["superseded_by"] == c.id
    assert texts(memory, "Session tokens expire") == []


def test_a_plan_with_conflicts_and_related_links_both_ways_and_keeps_all_live(
    tmp_path: Path, memory: Memory
) -> None:
    """What the write path does with the judge's ``conflicts`` and ``related`` (the judge itself
    is tested with its own module): a new file naming both, each older memory naming it."""
    from engram.memories.agent import _write
    from engram.memories.files import new_memory_id
    from engram.memories.judge.dedup import Neighbour, WritePlan
    from engram.memories.lifecycle.memory_io import read_known
    from engram.models import ExtractedMemory

    writer = memory.writer
    a = memory.remember("Deploys are frozen on Fridays.", type="decision")
    b = memory.remember("Hotfixes may ship on any day.", type="decision")

    def near(stored_id: str, path: str) -> Neighbour:
        known = read_known(writer, path)
        assert known is not None
        return Neighbour(stored_id, path, "decision", 0.2, known)

    new = ExtractedMemory(type="decision", content="Deploys are allowed on Fridays.")
    front = {"id": new_memory_id(datetime.now(UTC)), "title": "Deploys", "type": "decision"}
    front["created_at"] = datetime.now(UTC).isoformat()
    plan = WritePlan(conflicts=[near(a.id, a.path)], related=[near(b.id, b.path)])
    stored = _write(writer, plan, new, front, tmp_path / "memory" / "decision", None, now())
    assert stored.linked_conflicts == [a.id] and stored.linked_related == [b.id]
    mine = frontmatter(tmp_path / stored.path)
    assert mine["conflicts_with"] == [a.id] and mine["related"] == [b.id]
    assert frontmatter(tmp_path / a.path)["conflicts_with"] == [stored.id]
    assert frontmatter(tmp_path / b.path)["related"] == [stored.id]
    assert {m.id for m in memory.list_memories()} == {a.id, b.id, stored.id}  # all live
    found = memory.search("deploys on Fridays", mode="keyword").hits
    assert [h.chunk.metadata["id"] for h in found][:2] == [stored.id, a.id]  # newer first


def now() -> datetime:
    return datetime.now(UTC)


# --------------------------------------------------------------------------- the invariant

SUBJECTS = ["The API", "the API", "The worker"]
END = st.sampled_from([".", "", "!"])  # normalised away: the same fact, another wording
FACTS = st.one_of(
    st.builds(
        "{} listens on port {}{}".format,
        st.sampled_from(SUBJECTS),
        st.sampled_from([80, 8001]),
        END,
    ),
    st.builds("{} run ruff before committing{}".format, st.sampled_from(["Always", "Never"]), END),
    st.builds(
        "{} runs on host {}{}".format,
        st.sampled_from(SUBJECTS),
        st.sampled_from(["h110", "h1110"]),
        END,
    ),
)
OPS = st.lists(
    st.one_of(
        st.tuples(st.just("remember"), FACTS, st.sampled_from(["note", "project-config"])),
        st.tuples(st.just("capture"), st.sampled_from(["tabs", "spaces"])),
        st.tuples(st.just("forget"), st.integers(0, 20)),
        st.tuples(st.just("restore"), st.integers(0, 20), st.none() | st.integers(1, 3)),
    ),
    min_size=1,
    max_size=8,
)


def _file_wordings(path: Path) -> set[str]:
    fm = read_frontmatter(path.read_text(encoding="utf-8"))
    return {wording_of(dict(fm.metadata), fm.body), *(r.wording for r in revisions_of(path))}


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(ops=OPS)
@example(
    ops=[
        ("remember", "The API listens on port 80.", "note"),
        ("remember", "the API listens on port 80", "note"),  # merged: a revision
        ("restore", 0, 1),
        ("remember", "The API listens on port 8001.", "note"),  # supersedes
        ("restore", 0, None),
        ("forget", 1),
    ]
)
def test_no_sequence_of_writes_loses_a_stored_wording(ops: list[tuple[object, ...]]) -> None:
    with tempfile.TemporaryDirectory() as tmp, memory_factory(Path(tmp), "sqlite") as factory:
        root = Path(tmp)
        memory = factory()
        expected: set[str] = set()
        for op in ops:
            paths = sorted(memory_files(root / "memory"))
            if op[0] == "remember":
                stored = memory.remember(str(op[1]), type=op[2])  # type: ignore[arg-type]
                expected.add(str(op[1]))
                assert stored.path
            elif op[0] == "capture":
                first, second = ("tabs", "spaces") if op[1] == "tabs" else ("spaces", "tabs")
                said = (
                    f"I prefer {first} over {second} for indentation in this repository, "
                    "please keep it that way."
                )
                reply = "Understood, I will keep that in mind from now on."
                report = memory.capture(
                    [Message(role="user", content=said), Message(role="assistant", content=reply)]
                )
                assert report.stored, report.summary()  # the step writes, or it tests nothing
                for stored in report.stored:
                    file = root / stored.path
                    fm = read_frontmatter(file.read_text(encoding="utf-8"))
                    expected.add(wording_of(dict(fm.metadata), fm.body))
            elif op[0] == "forget" and paths:
                gone = paths[int(str(op[1])) % len(paths)]
                lost = _file_wordings(gone)
                memory.forget(str(gone))
                expected -= lost  # removed explicitly: the only way a wording may go
            elif op[0] == "restore" and paths:
                target = paths[int(str(op[1])) % len(paths)]
                revision = op[2] if isinstance(op[2], int) else None
                # Nothing to restore there is refused, and changes nothing.
                with contextlib.suppress(InvalidMemory):
                    memory.restore(str(target), revision)
            missing = expected - wordings(root)
            assert not missing, f"lost after {op}: {missing}"
        memory.index()
        assert not expected - wordings(root)


def test_a_hand_written_revisions_entry_survives_the_next_merge(
    tmp_path: Path, memory: Memory
) -> None:
    first = memory.remember("The staging database is refreshed every Sunday night.")
    path = tmp_path / first.path
    edited = with_frontmatter(
        path.read_text(encoding="utf-8"), {"revisions": ["a note a person left here"]}
    )
    path.write_text(edited, encoding="utf-8")
    again = memory.remember("the staging database is refreshed every sunday night")
    assert again.id == first.id and again.action == "updated"
    kept = frontmatter(path)["revisions"]
    assert kept[0] == "a note a person left here"
    assert kept[1]["wording"] == "The staging database is refreshed every Sunday night."
