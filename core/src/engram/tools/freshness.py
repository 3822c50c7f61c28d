"""Keeping a long-lived process's index up to date with memories other processes write.

``engram remember`` in another terminal, a hook of another project writing a user memory, a
person editing a memory file: the memory folders change under a running ``engram mcp`` that
has no watcher. Before each call the server takes a cheap look at its memory folders (the
stat of every folder and memory file in them, hidden folders such as ``.engram/`` left out, so
the access log a search writes changes nothing); when that differs from its last look, the
ordinary incremental index runs over those folders (``Memory.index``: stamps first, only new or
changed files read). When nothing changed, a call costs one walk of the memory folders.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from engram.errors import EngramError
from engram.ingest.vault import ALWAYS_SKIPPED_DIRS
from engram.memory import Memory

log = logging.getLogger(__name__)

Look = tuple[tuple[str, int, int, int], ...]


def look(folders: list[Path]) -> Look:
    """(path, mtime_ns, size, inode) of each folder and memory file under ``folders``."""
    seen: list[tuple[str, int, int, int]] = []
    for root in folders:
        for top, dirs, files in os.walk(root):
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and d not in ALWAYS_SKIPPED_DIRS
            )
            names = [top, *(os.path.join(top, f) for f in sorted(files) if _markdown(f))]
            for name in names:
                try:
                    st = os.stat(name)
                except OSError:  # gone between the listing and the stat: the next look sees it
                    continue
                seen.append((name, st.st_mtime_ns, st.st_size, st.st_ino))
    return tuple(seen)


def _markdown(name: str) -> bool:
    return name.endswith((".md", ".markdown")) and not name.startswith(".")


class Freshness:
    """Brings ``memory``'s index up to its memory folders when they changed since the last
    look. Not thread-safe on its own: call it under the memory's lock."""

    def __init__(self) -> None:
        self._last: Look | None = None
        self._failed: str | None = None  # the last failure, said once (every call retries)
        self.runs = 0  # index runs it started (for tests and the log)

    def refresh(self, memory: Memory) -> None:
        folders = [f.path for f in memory.folders if f.path.is_dir()]
        now = look(folders)
        if now == self._last:
            return
        if folders:
            try:
                report = memory.index(folders)
            except EngramError as exc:  # the call goes on with the index as it is; next time
                said = str(exc)
                level = logging.DEBUG if said == self._failed else logging.WARNING
                log.log(
                    level, "engram: bringing the index up to the memory folders failed: %s", exc
                )
                self._failed = said
                return
            self._failed = None
            self.runs += 1
            if report.new or report.changed or report.removed:
                log.info("engram: indexed memories changed elsewhere: %s", report.summary())
        # The look from before the index: a file written while it ran is seen next time (the
        # index's own writes, a chain repaired, cost one more no-op run).
        self._last = now
