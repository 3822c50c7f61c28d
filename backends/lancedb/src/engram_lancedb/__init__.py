"""engram-lancedb: an engram store on LanceDB, embedded in a folder or on object storage.

Every ``engram`` command loads every plugin, so LanceDB (and pyarrow) are imported only when a
LanceDB store is actually opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_lancedb.options import LanceDBOptions

if TYPE_CHECKING:
    from engram_lancedb.optimize import OptimizeReport
    from engram_lancedb.store import LanceDBStore

__all__ = ["LanceDBOptions", "LanceDBStore", "OptimizeReport", "open_store", "register_stores"]


def open_store(options: LanceDBOptions) -> LanceDBStore:
    """The registered factory: imports LanceDB on first use."""
    from engram_lancedb.store import LanceDBStore

    return LanceDBStore(options)


def __getattr__(name: str) -> Any:
    if name == "LanceDBStore":
        from engram_lancedb.store import LanceDBStore

        return LanceDBStore
    if name == "OptimizeReport":
        from engram_lancedb.optimize import OptimizeReport

        return OptimizeReport
    raise AttributeError(name)


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "lancedb"``."""
    register("lancedb", open_store, options=LanceDBOptions)
