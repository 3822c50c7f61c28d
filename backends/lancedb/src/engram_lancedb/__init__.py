"""engram-lancedb: an engram store on LanceDB, embedded in a folder or on object storage.

Every ``engram`` command loads every plugin, so the store is registered by its path: LanceDB (and
pyarrow) are imported only when a LanceDB store is actually opened. The store is
``engram_lancedb.store``'s ``LanceDBStore``.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_lancedb.options import LanceDBOptions

__all__ = ["LanceDBOptions", "register_stores"]


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "lancedb"``."""
    register("lancedb", "engram_lancedb.store:LanceDBStore", options=LanceDBOptions)
