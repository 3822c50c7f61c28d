"""The hook engram-sqlite declares. Documented in docs/plugins/hooks.md and the README.

engram-sqlite adds this module to the plugin manager (``register_hookspecs``) when it loads, so
the hook exists exactly where a SQLite store can call it. A plugin that should also load where
engram-sqlite is not installed implements it with ``@hookimpl(optionalhook=True)``.
"""

from __future__ import annotations

from typing import Any

from engram import hookspec


@hookspec
def prepare_connection(conn: Any, store: str) -> None:
    """Called with every new SQLite connection a store opens (functions, pragmas, extensions)."""
