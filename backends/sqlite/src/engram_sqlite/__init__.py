"""engram-sqlite: the default engram store, one SQLite file with sqlite-vec and FTS5."""

from __future__ import annotations

from engram.hookspecs import hookimpl
from engram.registry import Register
from engram_sqlite.driver import DriverInfo, diagnose
from engram_sqlite.options import SQLiteOptions
from engram_sqlite.store import SQLiteStore

__all__ = ["DriverInfo", "SQLiteOptions", "SQLiteStore", "diagnose", "register_stores"]


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "sqlite"``."""
    register("sqlite", SQLiteStore, options=SQLiteOptions)
