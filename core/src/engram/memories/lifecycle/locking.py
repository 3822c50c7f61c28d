"""One writer at a time per memory folder: the plan-and-write step of a write (find the
neighbours, decide, write the files) runs under a file lock in the folder's ``.engram/``.

Without it two processes writing contradicting versions of one fact both see the same live
memory and both supersede it: a forked chain. The lock is ``filelock``'s (an OS lock on
``.engram/write.lock``, released by the OS when a process dies, so a kill -9 never leaves it
held). It is a per-path singleton, so a write that writes again inside (aging condensing into a
learned pattern) re-enters it instead of waiting for itself.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from engram.dbfiles.folder import ENGRAM_DIR, ensure_engram_dir
from engram.errors import EngramError

LOCK_NAME = "write.lock"
WAIT_SECONDS = 120.0


class WriteLockTimeout(EngramError):
    """Another process held a memory folder's write lock for too long."""


@contextmanager
def write_lock(folder: Path, timeout: float = WAIT_SECONDS) -> Iterator[None]:
    """Hold the write lock of the memory folder ``folder`` for the duration of the block."""
    from filelock import FileLock, Timeout  # only writers lock: a recall need not import it

    ensure_engram_dir(folder / ENGRAM_DIR)
    path = folder / ENGRAM_DIR / LOCK_NAME
    lock = FileLock(path, timeout=timeout, is_singleton=True)
    try:
        lock.acquire()
    except Timeout:
        raise WriteLockTimeout(
            f"another engram process has been writing to {folder} for over {timeout:.0f}s "
            f"(lock {path}); wait for it to finish, then try again"
        ) from None
    try:
        yield
    finally:
        lock.release()
