"""A write that did not finish is finished by the next one: the files are the truth.

A ``remember`` writes the new memory, indexes it, then marks and re-indexes the older ones.
Killed in between, it leaves a memory on disk that the index does not hold, or an older memory
not yet marked; the next write plans from the index (its nearest live memories), so without
this it would not see the newer memory and would supersede the older one a second time (a
fork: two live heads). So a write leaves ``.engram/write.pending`` in its folder while it runs
(under the folder's write lock) and removes it when done; the next write that finds it runs
``chains.heal`` first (repair the chains, index what is not indexed as it is on disk), and
plans against what the files say. A clean write costs one create and one unlink.

A write inside a write of the same folder by this thread (aging condensing into a learned
pattern) is part of the outer one: it neither heals nor clears the mark.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.dbfiles.folder import ENGRAM_DIR, ensure_engram_dir
from engram.ingest.report import IndexReport
from engram.memories.lifecycle import chains
from engram.memories.scopes import MemoryFolder
from engram.memories.writer import Writer
from engram.models import StoredMemory

MARK_NAME = "write.pending"


class _Open(threading.local):
    """The folders this thread is writing (a count each: writes nest). Per thread, as the
    write lock is: another thread's write waits for the lock, it is not nested in this one."""

    def __init__(self) -> None:
        self.folders: dict[Path, int] = {}


_open = _Open()


def mark_path(folder: Path) -> Path:
    """Where a folder's mark of an unfinished write lives."""
    return folder / ENGRAM_DIR / MARK_NAME


@contextmanager
def finishing(writer: Writer, folder: MemoryFolder) -> Iterator[IndexReport | None]:
    """Hold under the folder's write lock around a write: heal what an interrupted write left
    (yields that heal's report, None when there was nothing to heal), mark this write as
    running, and clear the mark only when the block ends without an exception (an error may
    have left a half-done write too: the next write heals it)."""
    key = folder.path
    writing = _open.folders
    if writing.get(key):  # nested in this thread's own write of the folder
        writing[key] += 1
        try:
            yield None
        finally:
            writing[key] -= 1
        return
    mark = mark_path(key)
    healed = chains.heal(writer, folder) if mark.exists() else None
    ensure_engram_dir(mark.parent)
    mark.touch()
    writing[key] = 1
    try:
        yield healed
        with contextlib.suppress(OSError):
            os.unlink(mark)
    finally:
        writing.pop(key, None)


def add_healed(stored: StoredMemory, healed: IndexReport | None) -> None:
    """What finishing an interrupted earlier write had to say, told with the new write."""
    if healed is not None:
        stored.warnings.extend(healed.warnings)
        stored.warnings.extend(f"{s.path} is not indexed: {s.reason}" for s in healed.skipped)
