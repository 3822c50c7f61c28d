"""The exact-duplicate lookup (``same_text``) remembers what each memory file says, keyed by the
file's stat, so a write no longer parses every memory's frontmatter. The file stays the truth:
a hand edit, a status change or a damaged cache must give the answer a fresh parse gives."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.dbfiles.folder import ENGRAM_DIR
from engram.memories.agent import supersede
from engram.memories.files import memory_files
from engram.memories.lifecycle.content_hash import CACHE_NAME, content_hash, same_text
from engram.memory import Memory
from engram.models import StoredMemory
from support import MemoryFactory, memory_factory

FACTS = [f"Service s{i} listens on port {8000 + i}." for i in range(4)]


def age(folder: Path, seconds: float = 3600) -> None:
    """Date every memory file back, as files written before this session (past ``STABLE_S``)."""
    past = time.time() - seconds
    for path in memory_files(folder):
        os.utime(path, (past, past))


def fresh_answer(folder: Path, kind: str, text: str) -> Path | None:
    """What the lookup answers with no cache at all."""
    (folder / ENGRAM_DIR / CACHE_NAME).unlink(missing_ok=True)
    return same_text(folder, kind, content_hash(text))


def remembered(
    open_memory: MemoryFactory, tmp_path: Path
) -> tuple[Memory, list[StoredMemory], Path]:
    """The four FACTS remembered and dated back, and their folder."""
    memory = open_memory()
    stored = [memory.remember(fact, type="fact") for fact in FACTS]
    folder = tmp_path / "memory"
    age(folder)
    return memory, stored, folder


def test_a_cached_lookup_finds_the_same_text_and_reads_no_unchanged_file(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    _, stored, folder = remembered(open_memory, tmp_path)
    assert same_text(folder, "fact", content_hash(FACTS[2])) == tmp_path / stored[2].path
    assert (folder / ENGRAM_DIR / CACHE_NAME).is_file()

    # Make the cache say other words for one file whose stat it still has: its answer follows
    # the cache, so no unchanged file was read.
    path = tmp_path / stored[1].path
    cache = folder / ENGRAM_DIR / CACHE_NAME
    data = json.loads(cache.read_text())
    data["files"][str(path)][1] = ["fact", content_hash("Other words.")]
    cache.write_text(json.dumps(data))
    assert same_text(folder, "fact", content_hash("other words")) == path
    missing = same_text(folder, "fact", content_hash(FACTS[1]))
    other_type = same_text(folder, "decision", content_hash("Other words."))
    assert missing is None and other_type is None
    assert fresh_answer(folder, "fact", FACTS[1]) == path  # a fresh parse reads the file


def test_a_same_size_edit_with_its_mtime_put_back_is_read_and_never_merged_into(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    """Issue 39, point 6: the cache's stamp has the ctime, which ``utime`` cannot put back, so
    an exact duplicate of a memory's old wording is not merged into the edited file."""
    memory, stored, folder = remembered(open_memory, tmp_path)
    path = tmp_path / stored[1].path
    assert same_text(folder, "fact", content_hash(FACTS[1])) == path  # cached, stat and all
    st = path.stat()
    path.write_text(path.read_text().replace("listens on", "answers at"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_ino) == (st.st_size, st.st_ino)
    assert same_text(folder, "fact", content_hash(FACTS[1])) is None
    assert same_text(folder, "fact", content_hash("Service s1 answers at port 8001.")) == path
    again = memory.remember(FACTS[1], type="fact")
    assert again.path != stored[1].path  # a memory of its own, not merged into the edit
    assert "answers at" in path.read_text() and FACTS[1] in (tmp_path / again.path).read_text()


def test_a_hand_edit_a_supersede_and_a_damaged_cache_are_seen(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    memory, stored, folder = remembered(open_memory, tmp_path)
    assert same_text(folder, "fact", content_hash(FACTS[0])) is not None  # cache written

    # A person rewrites a memory's wording by hand: the new wording is found, the old is not.
    path = tmp_path / stored[0].path
    path.write_text(path.read_text().replace(FACTS[0], "Service s0 moved to port 9000."))
    assert same_text(folder, "fact", content_hash("Service s0 moved to port 9000.")) == path
    assert same_text(folder, "fact", content_hash(FACTS[0])) is None

    # A superseded memory is no longer merged into.
    supersede(memory.writer, [stored[3].path], stored[2].id)
    assert same_text(folder, "fact", content_hash(FACTS[3])) is None

    # A cache that cannot be read is rebuilt, with the same answers.
    (folder / ENGRAM_DIR / CACHE_NAME).write_text("{not json")
    assert same_text(folder, "fact", content_hash(FACTS[1])) == tmp_path / stored[1].path


def test_a_file_changed_within_the_stable_window_is_read_again(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    """A stat taken less than ``STABLE_S`` after the file's mtime is not remembered: a second
    edit within the mtime's granularity could leave the same stat."""
    memory = open_memory()
    stored = memory.remember(FACTS[0], type="fact")
    folder = tmp_path / "memory"
    assert same_text(folder, "fact", content_hash(FACTS[0])) == tmp_path / stored.path
    cache = folder / ENGRAM_DIR / CACHE_NAME
    assert not cache.exists() or stored.path.split("/")[-1] not in cache.read_text()
    age(folder)
    assert same_text(folder, "fact", content_hash(FACTS[0])) == tmp_path / stored.path
    assert stored.path.split("/")[-1] in cache.read_text()  # old enough now: remembered


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(st.sampled_from(["remember", "edit", "forget"]), st.integers(0, 5)),
        min_size=1,
        max_size=10,
    )
)
def test_the_cached_answer_is_always_the_fresh_answer(
    tmp_path_factory: pytest.TempPathFactory, steps: list[tuple[str, int]]
) -> None:
    root = tmp_path_factory.mktemp("hashes")
    folder = root / "memory"
    texts = [f"Job j{i} runs at {i}:00." for i in range(6)]
    asked = texts + [t.replace("runs at", "starts at") for t in texts]
    past = time.time() - 3600
    with memory_factory(root, "memory") as open_memory:
        memory = open_memory()
        for step, (op, i) in enumerate(steps):
            paths = sorted(memory_files(folder))
            if op == "remember":
                memory.remember(texts[i], type="fact")
            elif paths and op == "forget":
                memory.forget(paths[i % len(paths)].relative_to(root).as_posix())
            elif paths:
                path = paths[i % len(paths)]
                path.write_text(path.read_text().replace("runs at", "starts at"))
            for path in memory_files(folder):  # every file old enough to be remembered
                os.utime(path, (past + step, past + step))
            for text in asked:
                cached = same_text(folder, "fact", content_hash(text))
                cache = folder / ENGRAM_DIR / CACHE_NAME
                kept = cache.read_bytes() if cache.exists() else None
                assert cached == fresh_answer(folder, "fact", text), (op, text)
                if kept is not None:
                    cache.write_bytes(kept)
