"""engram-chroma: an engram store on Chroma, embedded in a folder or against a Chroma server.

Every ``engram`` command loads every plugin, so Chroma itself is imported only when a Chroma
store is actually opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_chroma.options import ChromaOptions

if TYPE_CHECKING:
    from engram_chroma.store import ChromaStore

__all__ = ["ChromaOptions", "ChromaStore", "open_store", "register_stores"]


def open_store(options: ChromaOptions) -> ChromaStore:
    """The registered factory: imports Chroma on first use."""
    from engram_chroma.store import ChromaStore

    return ChromaStore(options)


def __getattr__(name: str) -> Any:
    if name == "ChromaStore":
        from engram_chroma.store import ChromaStore

        return ChromaStore
    raise AttributeError(name)


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "chroma"``."""
    register("chroma", open_store, options=ChromaOptions)
