"""``engram watch``: edits, new files and deletions become searchable (or unsearchable) within
seconds, the index's own writes never trigger a run, and the watcher stops on request."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_support import wait_until
from engram.memory import Memory
from engram.tools import Toolbox
from engram.watch import WatchEvent, background_watcher, watch_memory
from support import MemoryFactory, write_vault


class Watcher:
    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.events: list[WatchEvent] = []
        self.lock = threading.RLock()
        self.stop = threading.Event()
        self.ready = threading.Event()
        self.thread = threading.Thread(
            target=watch_memory,
            args=(memory,),
            kwargs={
                "stop_event": self.stop,
                "on_ready": self.ready.set,
                "on_event": self.events.append,
                "lock": self.lock,
                "debounce_ms": 400,
                "quiet_ms": 100,
            },
            daemon=True,
        )

    def finds(self, query: str) -> bool:
        with self.lock:
            return bool(self.memory.search(query, mode="keyword").hits)


@pytest.fixture
def watcher(tmp_path: Path, open_memory: MemoryFactory) -> Iterator[Watcher]:
    write_vault(tmp_path, {"notes/a.md": "# A\n\nthe first version mentions apricots\n"})
    w = Watcher(open_memory())
    w.thread.start()
    try:
        assert w.ready.wait(30), "the watcher never started"
        yield w
    finally:
        w.stop.set()
        w.thread.join(30)
    assert not w.thread.is_alive(), "the watcher did not stop"


def test_edits_new_files_and_deletions_are_picked_up(watcher: Watcher, tmp_path: Path) -> None:
    assert watcher.events[0].source == "vault" and watcher.events[0].report is not None
    assert watcher.finds("apricots")

    (tmp_path / "notes" / "a.md").write_text("# A\n\nnow it is about blueberries\n")
    wait_until(lambda: watcher.finds("blueberries"), what="the edit to be searchable")
    assert not watcher.finds("apricots")

    (tmp_path / "notes" / "b.md").write_text("# B\n\ncranberries in a new note\n")
    wait_until(lambda: watcher.finds("cranberries"), what="the new file to be searchable")

    (tmp_path / "notes" / "b.md").unlink()
    wait_until(lambda: not watcher.finds("cranberries"), what="the deleted file to vanish")


def test_a_memory_stored_meanwhile_is_kept_and_index_writes_cause_no_runs(
    watcher: Watcher,
) -> None:
    with watcher.lock:
        stored = watcher.memory.remember("durian smell policy", title="Durian")
    wait_until(
        lambda: any(e.changed and e.report for e in watcher.events),
        timeout=120,
        what="a run for the memory",
    )
    # On a loaded machine the file's events can arrive in two batches, so a second run may be
    # under way: read the store under the watcher's lock, never beside a run on its connection.
    with watcher.lock:
        runs = [e for e in watcher.events if e.changed]
        assert all(e.report and e.report.removed == 0 for e in runs)
        assert watcher.finds("durian")
        assert stored.path in watcher.memory.store.list_documents()


def test_background_watcher_serves_tools_and_stops(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    write_vault(tmp_path, {"notes/a.md": "# A\n\nelderberry jam recipe\n"})
    memory = open_memory()
    lock = threading.RLock()
    box = Toolbox(memory, lock)

    def finds(query: str) -> bool:
        result = box.call("memory_search", {"query": query})
        return bool(result.ok and result.data and result.data["results"])

    with background_watcher(memory, lock=lock, ready_timeout=30) as thread:
        wait_until(lambda: finds("elderberry jam"), what="the initial index")
        (tmp_path / "notes" / "a.md").write_text("# A\n\nfig chutney recipe\n", encoding="utf-8")
        wait_until(lambda: finds("fig chutney"), what="the edit through the tools")
    assert not thread.is_alive()
