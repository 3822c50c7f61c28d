"""Pick a SQLite build that can load sqlite-vec and has FTS5.

The stdlib ``sqlite3`` is preferred when it can load extensions; many Python builds (this project's
CI included) compile it without ``enable_load_extension``, so ``sqlean.py`` — a DB-API drop-in with
its own recent SQLite — is the fallback. Both expose the same DB-API, so the store has one code
path. Each candidate is probed on a throw-away in-memory database, so a damaged index file is
reported as such and not as a driver problem.
"""

from __future__ import annotations

import importlib
import sqlite3
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Literal

from engram import StoreError
from engram_sqlite.options import MEMORY, Driver

DriverName = Literal["sqlite3", "sqlean"]
MIN_SQLITE = (3, 38, 0)  # RETURNING, built-in JSON functions
_FIXES: dict[Driver, str] = {
    "auto": "install the fallback driver and sqlite-vec: `pip install sqlean.py sqlite-vec`",
    "sqlean": 'install them: `pip install sqlean.py sqlite-vec`, or set driver = "auto" in [store]',
    "sqlite3": (
        'use a Python whose sqlite3 can load extensions, or set driver = "auto" (or '
        '"sqlean") in [store] and `pip install sqlean.py sqlite-vec`'
    ),
}


@dataclass(frozen=True)
class DriverInfo:
    """What ``doctor`` reports: which build is in use and why."""

    name: DriverName
    reason: str
    sqlite_version: str
    vec_version: str
    fts5: bool
    tried: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "driver": self.name,
            "reason": self.reason,
            "sqlite_version": self.sqlite_version,
            "vec_version": self.vec_version,
            "fts5": self.fts5,
            "tried": list(self.tried),
        }


class _Unusable(Exception):
    """This driver cannot serve the store; the message says why."""


def select(driver: Driver) -> tuple[ModuleType, DriverInfo]:
    """The DB-API module to use for ``driver`` (the first usable one for ``auto``), and why."""
    order: tuple[DriverName, ...] = ("sqlite3", "sqlean") if driver == "auto" else (driver,)
    failures: list[str] = []
    for name in order:
        try:
            module, vec_version = _probe(name)
        except _Unusable as exc:
            failures.append(f"{name}: {exc}")
            continue
        info = DriverInfo(
            name=name,
            reason=_reason(name, driver, failures),
            sqlite_version=str(module.sqlite_version),
            vec_version=vec_version,
            fts5=True,
            tried=tuple(failures),
        )
        return module, info
    raise StoreError(
        f"the sqlite store cannot use driver {driver!r} here ({'; '.join(failures)}); "
        f"{_FIXES[driver]}"
    )


def load_vec(conn: sqlite3.Connection) -> str:
    """Load sqlite-vec into ``conn`` and return ``vec_version()``; raises the driver's errors."""
    import sqlite_vec

    conn.enable_load_extension(True)
    try:
        conn.load_extension(sqlite_vec.loadable_path())
    finally:
        conn.enable_load_extension(False)
    return str(conn.execute("SELECT vec_version()").fetchone()[0])


def diagnose(driver: Driver = "auto") -> dict[str, Any]:
    """Driver facts for ``engram doctor``; never raises, reports the error instead."""
    try:
        _, info = select(driver)
    except StoreError as exc:
        return {
            "driver": None,
            "reason": str(exc),
            "sqlite_version": None,
            "vec_version": None,
            "fts5": False,
            "tried": [],
        }
    return info.as_dict()


def _probe(name: DriverName) -> tuple[ModuleType, str]:
    module = _import(name)
    version = str(module.sqlite_version)
    if tuple(int(p) for p in version.split(".")[:3]) < MIN_SQLITE:
        need = ".".join(map(str, MIN_SQLITE))
        raise _Unusable(f"its SQLite is {version}, older than the {need} the store needs")
    if not hasattr(module.Connection, "enable_load_extension"):
        raise _Unusable("this Python's sqlite3 was built without extension loading")
    try:
        import sqlite_vec  # noqa: F401
    except ImportError as exc:
        raise _Unusable("the sqlite-vec package is not installed") from exc
    conn = module.connect(MEMORY)
    try:
        try:
            vec_version = load_vec(conn)
        except module.Error as exc:
            raise _Unusable(f"loading sqlite-vec failed ({exc})") from exc
        try:
            conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
        except module.Error as exc:
            raise _Unusable(f"its SQLite lacks FTS5, needed for keyword search ({exc})") from exc
    finally:
        conn.close()
    return module, vec_version


def _import(name: DriverName) -> ModuleType:
    if name == "sqlite3":
        return sqlite3
    try:
        return importlib.import_module("sqlean")
    except ImportError as exc:
        raise _Unusable("sqlean.py is not installed") from exc


def _reason(name: DriverName, requested: Driver, earlier: list[str]) -> str:
    if requested != "auto":
        return f"driver = {requested!r} was requested in the store options"
    if earlier:
        return f"fallback to {name}: " + "; ".join(earlier)
    return f"{name} can load sqlite-vec and has FTS5"
