"""``engram watch``: edits, new files and deletions become searchable (or unsearchable) within
seconds, the index's own writes never trigger a run, and the watcher stops on request."""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from watchfiles import Change

from agent_support import wait_until
from engram.cli.watch import WatchEvent, _Relevant, background_watcher, watch_memory
from engram.memory import Memory
from engram.tools.toolbox import Toolbox
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


def test_files_written_into_new_folders_at_once_are_found(watcher: Watcher) -> None:
    """A file written the moment its folder is made can come before the watch on the folder
    (inotify then reports the folder only): the new folder triggers the run that finds it."""
    root = watcher.memory.config.root / "notes"
    words = ["quince", "medlar", "loquat", "sapote", "rambutan"]
    for i, word in enumerate(words):
        folder = root / f"new{i}" / "deeper"
        folder.mkdir(parents=True)
        (folder / f"{word}.md").write_text(f"# {word}\n\n{word} harvest notes\n", "utf-8")
    for word in words:
        wait_until(functools.partial(watcher.finds, word), timeout=120, what=f"{word} found")


def test_a_new_folder_counts_as_a_change_unless_it_is_the_index_own(tmp_path: Path) -> None:
    made = tmp_path / "type-folder"
    made.mkdir()
    own = tmp_path / ".engram" / "cache"
    own.mkdir(parents=True)
    relevant = _Relevant([tmp_path], [])
    assert relevant(Change.added, str(made))
    assert not relevant(Change.added, str(own))
    assert not relevant(Change.modified, str(made))
    assert not relevant(Change.added, str(tmp_path.parent))  # outside the watched folders


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


def test_ctrl_c_stops_engram_watch_with_130_like_every_command(tmp_path: Path) -> None:
    write_vault(tmp_path, {"notes/a.md": "# A\n\ngooseberry fool\n"})
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "watch"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ENGRAM_USER_CONFIG": str(tmp_path / "none.toml")},
        # A shell starts background jobs with SIGINT ignored; Ctrl+C must reach this one.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    assert proc.stderr is not None
    seen: list[str] = []
    while not seen or "watching for changes" not in seen[-1]:
        line = proc.stderr.readline()
        assert line, f"watch ended before it was ready: {seen}"
        seen.append(line)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert "KeyboardInterrupt" not in err and "Traceback" not in err
    assert err.splitlines()[-1:] == ["stopped watching"], err
