"""A store that was just called damaged (one not on this machine, which engram does not move
aside) is written to by nobody: index, remember, sessions and a tool's store all refuse with
the words it was called damaged with, while reads go on; ``rebuild`` makes it anew and writes
are welcome again. The rule lives in core, so it holds for any store."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import StoreConfig
from engram.errors import IndexDamaged, RemoteIndexDamaged
from engram.keeper import Keeper
from engram.memory import Memory
from engram.stores import damage as damage_mark
from engram.tools.toolbox import Toolbox
from support import MemoryFactory, write_vault


def _called_damaged(memory: Memory) -> RemoteIndexDamaged:
    damaged = RemoteIndexDamaged(
        where="s3://bucket/team (table engram_chunks)", lives_on="S3", detail="data deleted"
    )
    damage_mark.record(memory.config, damaged)
    return damaged


def _snapshot(memory: Memory) -> dict[str, str]:
    return {d.id: d.hash for d in memory.store.list_documents().values()}


def test_every_write_is_refused_with_the_same_words_and_reads_go_on(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    write_vault(tmp_path, {"notes/a.md": "# A\n\nThe zebracorn pump restarts nightly.\n"})
    memory = open_memory()
    memory.index()
    memory.remember("Deploys go out on Tuesdays.")
    damaged = _called_damaged(memory)
    before = _snapshot(memory)
    (tmp_path / "notes" / "b.md").write_text("# B\n\nA new quokka note.\n", encoding="utf-8")

    for write in (
        memory.index,
        memory.index_sessions,
        lambda: memory.remember("Backups run at midnight."),
    ):
        with pytest.raises(IndexDamaged) as refused:
            write()
        assert str(refused.value) == str(damaged)
    tool = Toolbox(memory).call("memory_store", {"content": "Backups run at midnight."})
    assert not tool.ok and "(table engram_chunks) is damaged" in tool.text
    assert _snapshot(memory) == before, "nothing was written to the store"
    assert not (tmp_path / "memory" / "note" / "backups-run-at-midnight.md").exists()
    assert memory.search("zebracorn pump").hits, "reads go on"

    memory.rebuild()
    assert memory.remember("Backups run at midnight.").path
    assert memory.search("quokka").hits


def test_a_mark_of_another_store_is_not_this_ones(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    _called_damaged(memory)
    with pytest.raises(IndexDamaged):
        damage_mark.refuse_writes(memory.config)
    other = memory.config.model_copy(update={"store": StoreConfig(backend="elsewhere")})
    damage_mark.refuse_writes(other)  # the project switched stores: the mark is not its


def test_a_long_lived_process_marks_what_it_reports_damaged(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory()
    keeper = Keeper(memory)
    damaged = RemoteIndexDamaged(
        where="http://127.0.0.1:1 (collection 'c')", lives_on="a Chroma server", detail="x"
    )

    def fails(_: Memory) -> None:
        raise damaged

    with pytest.raises(RemoteIndexDamaged):
        keeper.run(fails)
    assert keeper.healed == 0, "a remote store is never healed by the keeper"
    with pytest.raises(IndexDamaged) as refused:
        memory.remember("Not now.")
    assert str(refused.value) == str(damaged)
