"""engram-sqlite: the default engram store, one SQLite file with sqlite-vec and FTS5."""

from __future__ import annotations

from collections.abc import Callable

import pluggy

from engram import Register, hookimpl
from engram_sqlite import hookspecs
from engram_sqlite.driver import DriverInfo, diagnose
from engram_sqlite.options import SQLiteOptions
from engram_sqlite.store import SQLiteStore

__all__ = [
    "DriverInfo",
    "SQLiteOptions",
    "SQLiteStore",
    "diagnose",
    "register_hookspecs",
    "register_stores",
]


@hookimpl
def register_hookspecs(register: Callable[[object], None]) -> None:
    """Declare ``prepare_connection`` (``engram_sqlite.hookspecs``) on the manager loading us."""
    register(hookspecs)


@hookimpl
def register_stores(register: Register, plugin_manager: pluggy.PluginManager) -> None:
    """Make the store available as ``[store] backend = "sqlite"``, calling this manager's hooks."""
    register(
        "sqlite",
        "engram_sqlite.store:SQLiteStore",
        options=SQLiteOptions,
        plugin_manager=plugin_manager,
    )
