"""engram-chroma: an engram store on Chroma, embedded in a folder or against a Chroma server.

Every ``engram`` command loads every plugin, so the store is registered by its path: Chroma itself
is imported only when a Chroma store is actually opened. The store is ``engram_chroma.store``'s
``ChromaStore``.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_chroma.options import ChromaOptions

__all__ = ["ChromaOptions", "register_stores"]


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "chroma"``."""
    register("chroma", "engram_chroma.store:ChromaStore", options=ChromaOptions)
