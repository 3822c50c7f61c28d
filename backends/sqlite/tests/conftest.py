"""Fixtures: real stores on real files (or ``:memory:``), with a plugin manager the test owns."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pluggy
import pytest

from engram import IndexIdentity
from engram.testing.host import bare_plugin_manager as engram_plugin_manager
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite import hookspecs as sqlite_hookspecs

IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="markdown:400/80")
MakeStore = Callable[..., SQLiteStore]


def bare_plugin_manager(*plugins: object) -> pluggy.PluginManager:
    """A plugin manager with engram's and engram-sqlite's hookspecs and only the given plugins."""
    pm = engram_plugin_manager()
    pm.add_hookspecs(sqlite_hookspecs)
    for plugin in plugins:
        pm.register(plugin)
    return pm


@pytest.fixture
def pm() -> pluggy.PluginManager:
    return bare_plugin_manager()


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "index" / "engram.sqlite"


@pytest.fixture
def make_store(db_path: Path, pm: pluggy.PluginManager) -> Iterator[MakeStore]:
    """Open stores on ``db_path`` (or other options); all are closed after the test."""
    opened: list[SQLiteStore] = []

    def make(**options: Any) -> SQLiteStore:
        options.setdefault("path", db_path)
        store = SQLiteStore(SQLiteOptions(**options), plugin_manager=pm)
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: MakeStore) -> SQLiteStore:
    """A file-backed store with IDENTITY recorded."""
    s = make_store()
    s.set_identity(IDENTITY)
    return s
