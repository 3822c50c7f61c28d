"""Driver selection, the doctor report, plugin registration and the prepare_connection hook."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

import pluggy
import pytest
from pydantic import ValidationError

import engram_sqlite
from engram import StoreError, hookimpl, hookspec
from engram.testing.host import bare_plugin_manager, build_registry, get_plugin_manager
from engram_sqlite import SQLiteOptions, SQLiteStore, diagnose
from engram_sqlite import hookspecs as sqlite_hookspecs

STDLIB_CAN_LOAD = hasattr(sqlite3.Connection, "enable_load_extension")


def plugin_manager(*plugins: object) -> pluggy.PluginManager:
    """A manager as engram builds one (core's hookspecs, then plugins), with only ``plugins``."""
    return bare_plugin_manager(*plugins)


def test_diagnose_reports_driver_versions_and_fts5() -> None:
    report = diagnose()
    assert set(report) == {"driver", "reason", "sqlite_version", "vec_version", "fts5", "tried"}
    assert report["driver"] in {"sqlite3", "sqlean"}
    assert report["fts5"] is True
    assert str(report["vec_version"]).startswith("v")
    assert report["sqlite_version"].count(".") == 2
    if not STDLIB_CAN_LOAD:
        assert report["driver"] == "sqlean"
        assert "without extension loading" in report["reason"]


def test_store_reports_the_driver_it_runs_on(pm: pluggy.PluginManager) -> None:
    with SQLiteStore(SQLiteOptions(path=":memory:"), plugin_manager=pm) as s:
        assert s.driver.as_dict() == diagnose()
        version = s.connection.execute("SELECT sqlite_version()").fetchone()[0]
        assert version == s.driver.sqlite_version


def test_sqlean_can_be_forced(pm: pluggy.PluginManager, tmp_path: Path) -> None:
    with SQLiteStore(
        SQLiteOptions(path=tmp_path / "x.sqlite", driver="sqlean"), plugin_manager=pm
    ) as s:
        assert s.driver.name == "sqlean"
        assert "requested" in s.driver.reason
        assert type(s.connection).__module__.startswith("sqlean")


def test_forcing_the_stdlib_driver(pm: pluggy.PluginManager, tmp_path: Path) -> None:
    options = SQLiteOptions(path=tmp_path / "x.sqlite", driver="sqlite3")
    if STDLIB_CAN_LOAD:
        with SQLiteStore(options, plugin_manager=pm) as s:
            assert s.driver.name == "sqlite3"
    else:
        with pytest.raises(StoreError) as info:
            SQLiteStore(options, plugin_manager=pm)
        message = str(info.value)
        assert "without extension loading" in message
        assert 'driver = "auto"' in message
        assert "pip install sqlean.py" in message
        report = diagnose("sqlite3")
        assert report["driver"] is None
        assert "without extension loading" in report["reason"]


def test_missing_sqlean_says_what_to_install(
    pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sqlean", None)
    with pytest.raises(StoreError, match=r"pip install sqlean\.py sqlite-vec"):
        SQLiteStore(SQLiteOptions(path=":memory:", driver="sqlean"), plugin_manager=pm)
    report = diagnose("auto")
    if STDLIB_CAN_LOAD:
        assert report["driver"] == "sqlite3"
    else:
        assert report["driver"] is None
        assert "sqlean.py is not installed" in report["reason"]


def test_missing_sqlite_vec_says_what_to_install(
    pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "sqlite_vec", None)
    with pytest.raises(StoreError, match="sqlite-vec package is not installed"):
        SQLiteStore(SQLiteOptions(path=":memory:"), plugin_manager=pm)


def test_unwritable_location_is_a_store_error(pm: pluggy.PluginManager, tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match="cannot create the folder"):
        SQLiteStore(SQLiteOptions(path=blocker / "sub" / "x.sqlite"), plugin_manager=pm)
    with pytest.raises(StoreError, match="cannot open the index"):
        SQLiteStore(SQLiteOptions(path=tmp_path), plugin_manager=pm)


def test_options_are_strict() -> None:
    assert SQLiteOptions() == SQLiteOptions(
        path=Path(".engram/index.sqlite"), driver="auto", busy_timeout_ms=5000
    )
    with pytest.raises(ValidationError):
        SQLiteOptions.model_validate({"pth": "x"})
    with pytest.raises(ValidationError):
        SQLiteOptions.model_validate({"driver": "apsw"})
    with pytest.raises(ValidationError):
        SQLiteOptions(busy_timeout_ms=-1)


class ConnectionPlugin:
    """A third-party plugin: adds a SQL function and a pragma to every store connection."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    @hookimpl
    def prepare_connection(self, conn: Any, store: str) -> None:
        self.calls.append(store)
        conn.create_function("shout", 1, lambda s: f"{s.upper()}!", deterministic=True)
        conn.execute("PRAGMA cache_size = -4096")


def test_prepare_connection_hook_runs_on_every_connection(tmp_path: Path) -> None:
    plugin = ConnectionPlugin()
    pm = plugin_manager(engram_sqlite, plugin)
    options = SQLiteOptions(path=tmp_path / "x.sqlite")
    with SQLiteStore(options, plugin_manager=pm) as a, SQLiteStore(options, plugin_manager=pm) as b:
        assert plugin.calls == ["sqlite", "sqlite"]
        assert a.connection.execute("SELECT shout('hi')").fetchone() == ("HI!",)
        assert b.connection.execute("PRAGMA cache_size").fetchone() == (-4096,)


def test_registers_as_the_sqlite_store(tmp_path: Path) -> None:
    registry = build_registry(plugin_manager(engram_sqlite))
    entry = registry.get("store", "sqlite")
    assert entry.options is SQLiteOptions
    assert entry.distribution == "engram-sqlite"
    assert entry.plugin == "engram_sqlite.store"
    with entry.build(SQLiteOptions(path=tmp_path / "r.sqlite")) as store:
        assert isinstance(store, SQLiteStore)
        assert store.count() == 0


def test_a_store_calls_the_hooks_of_the_manager_that_built_it(tmp_path: Path) -> None:
    """Two managers side by side: each store sees only the plugins loaded with its own."""
    plugin = ConnectionPlugin()
    with_plugin = build_registry(plugin_manager(engram_sqlite, plugin)).get("store", "sqlite")
    without = build_registry(plugin_manager(engram_sqlite)).get("store", "sqlite")
    options = SQLiteOptions(path=tmp_path / "two.sqlite")
    with without.build(options) as plain, with_plugin.build(options) as prepared:
        assert plugin.calls == ["sqlite"]
        assert shout(prepared) == ("A!",)
        with pytest.raises(Exception, match="no such function: shout"):  # sqlite3 or sqlean
            shout(plain)
    # No manager given: no plugin hooks, and no global manager behind the store's back.
    with SQLiteStore(options) as by_hand, pytest.raises(Exception, match="no such function"):
        shout(by_hand)
    assert plugin.calls == ["sqlite"]


def shout(store: SQLiteStore) -> tuple[str]:
    """The SQL function ConnectionPlugin adds, called on the store's connection."""
    row: tuple[str] = store.connection.execute("SELECT shout('a')").fetchone()
    return row


class _ShoutSpecs:
    @hookspec
    def shout_word(self, word: str) -> str:  # type: ignore[empty-body]
        """A hook a plugin declares for itself."""


class _DeclaresShout:
    @hookimpl
    def register_hookspecs(self, register: Callable[[object], None]) -> None:
        register(_ShoutSpecs)


class _Shouts:
    @hookimpl
    def shout_word(self, word: str) -> str:
        return word.upper()


def test_register_hookspecs_lets_a_plugin_declare_hooks_of_its_own() -> None:
    """The historic ``register_hookspecs`` hook, as engram_sqlite uses it for
    ``prepare_connection``: a plugin declares a hook, and a plugin registered with it answers."""
    manager = bare_plugin_manager(_DeclaresShout(), _Shouts())
    assert manager.hook.shout_word(word="quiet") == ["QUIET"]
    assert manager.hook.shout_word.spec is not None


def test_prepare_connection_is_declared_by_engram_sqlite_not_core(tmp_path: Path) -> None:
    loaded = get_plugin_manager()
    assert loaded.hook.prepare_connection.spec is not None
    assert loaded.hook.prepare_connection.spec.namespace is sqlite_hookspecs
    core_only = get_plugin_manager(load_entry_points=False)
    assert not hasattr(core_only.hook, "prepare_connection")
    # A store opened with a manager that lacks the hook still opens.
    with SQLiteStore(SQLiteOptions(path=tmp_path / "c.sqlite"), plugin_manager=core_only) as s:
        assert s.count() == 0


class MisnamedArgument:
    @hookimpl
    def prepare_connection(self, connection: Any) -> None:
        raise AssertionError("never called")


def test_an_implementation_registered_before_the_spec_is_still_checked() -> None:
    """Hookspecs arrive when engram-sqlite registers; earlier implementations are checked then."""
    pm = plugin_manager(MisnamedArgument())
    with pytest.raises(pluggy.PluginValidationError, match="connection"):
        pm.register(engram_sqlite)


def test_entry_point_is_declared() -> None:
    [ep] = [e for e in metadata.entry_points(group="engram") if e.name == "sqlite"]
    assert ep.value == "engram_sqlite"
    assert ep.load() is engram_sqlite


def test_a_file_store_keeps_its_durability_and_checkpoint_settings(
    pm: pluggy.PluginManager, tmp_path: Path
) -> None:
    store = SQLiteStore(SQLiteOptions(path=tmp_path / "index.db"), plugin_manager=pm)
    try:
        conn = store.connection
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
        assert conn.execute("PRAGMA page_size").fetchone()[0] == 16384
        assert conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 4096
        assert conn.execute("PRAGMA journal_size_limit").fetchone()[0] == 64 * 1024 * 1024
    finally:
        store.close()
