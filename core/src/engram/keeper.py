"""One open memory for a long-lived process (the MCP server, the dashboard, ``watch``) that
outlives what happens to its index underneath it.

A CLI command opens the index, works and exits, so ``recovery.open_store`` heals a damaged
index when the next command opens it. A server keeps one store open for hours: meanwhile a user
or another process may cut the file short, damage it deep down, move it aside and rebuild it, or
delete it. The store notices before it touches the file (``IndexMoved`` for a file replaced or
removed, ``IndexDamaged`` for one cut short or broken); the keeper then closes that memory,
opens the index again as a command would (moving a damaged one aside), indexes the vault so an
index made anew holds the markdown files again (they are the truth), and runs the work once
more. A remote index is never healed here: its damage is reported, as everywhere.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from engram.errors import IndexDamaged, IndexMoved
from engram.stores import damage as damage_mark

if TYPE_CHECKING:
    from engram.memory import Memory

log = logging.getLogger(__name__)
T = TypeVar("T")


class Keeper:
    """Holds the open memory; ``run(work)`` calls ``work(memory)`` under ``lock`` (shared by
    every user of the memory in the process), healing the index and trying again once when it
    was replaced, removed or damaged under the process."""

    def __init__(self, memory: Memory, lock: threading.RLock | None = None) -> None:
        self.memory = memory
        self.lock = lock or threading.RLock()
        self.healed = 0  # times the index was opened again (for tests and the log)
        self._unhealed: IndexDamaged | IndexMoved | None = None

    def run(self, work: Callable[[Memory], T]) -> T:
        with self.lock:
            if self._unhealed is not None:  # the last try to reopen failed: again, first
                self._heal(self._unhealed)
            try:
                return work(self.memory)
            except IndexMoved as exc:
                self._heal(exc)
            except IndexDamaged as exc:
                if not exc.files:  # not on this machine: engram heals nothing there, and
                    damage_mark.record(self.memory.config, exc)  # nobody writes it meanwhile
                    raise
                self._heal(exc)
            return work(self.memory)

    def _heal(self, cause: IndexDamaged | IndexMoved) -> None:
        """Close the memory, open the index again (moving a damaged one aside) and bring it up to
        the markdown files. Closed first: the old connection then ends its own files, before
        they are moved aside or while a new index has none yet."""
        self._unhealed = cause
        old = self.memory
        try:
            old.close()
        except Exception:  # a damaged store may fail to close cleanly; it is left behind anyway
            log.debug("closing the damaged memory failed", exc_info=True)
        suspect = cause if isinstance(cause, IndexDamaged) else None
        memory = old.reopen(suspect=suspect)
        self.memory = memory
        self._unhealed = None
        self.healed += 1
        # A deleted or truncated index comes back empty: the vault's files are indexed again
        # (unchanged ones cost a stat each when it was only replaced or just rebuilt).
        memory.index()
        for notice in memory.notices:  # moved aside and rebuilt: said once, as the CLI does
            log.warning("engram: %s", notice)
        if not memory.notices:
            log.warning("engram: the index was opened again (%s)", cause)
