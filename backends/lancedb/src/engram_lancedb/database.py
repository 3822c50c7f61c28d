"""The LanceDB connection, the store's table handles, and one error translation for all of it.

Every call into LanceDB runs inside ``guard(action)``: whatever LanceDB, Arrow or the object
store client raises (connection refused, timeouts, permissions, a damaged table) becomes one
``StoreError`` that says where the store is, what failed and what to do, instead of a Rust or
botocore traceback. On object storage, a failure while the bucket still answers is a damaged
table (``damage.py``).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, cast

import lancedb
import pyarrow as pa  # type: ignore[import-untyped]
from lancedb.table import LanceTable

from engram import EngramError, StoreError
from engram_lancedb.damage import TABLES, remote_damage, shown
from engram_lancedb.options import LanceDBOptions

MAX_CAUSE = 300
_NOISE = re.compile(r"^(Invalid input, |Runtime error: |lance error: |LanceError\(\w+\): )+")
_SOURCE = re.compile(r",?\s*/\S+\.rs:\d+:\d+")  # "…, /root/.cargo/…/object_store.rs:1506:92"


class Database:
    """An open LanceDB database (a folder or an object-store prefix) and its tables."""

    def __init__(self, options: LanceDBOptions) -> None:
        self.options = options
        self.where = shown(options.target())  # for messages; never credentials
        self._tables: dict[str, LanceTable] = {}
        self._names: set[str] = set()
        self._listed = 0.0
        if not options.remote:
            self._make_folder(options.path)
        with self.guard("be opened"):
            self.conn = lancedb.connect(
                options.target(),
                storage_options=dict(options.storage_options) or None,
                read_consistency_interval=options.consistency(),
            )
            self.refresh()

    # -- errors -------------------------------------------------------------------------------

    @contextmanager
    def guard(self, action: str) -> Iterator[None]:
        """Turn anything but an engram error raised inside into a ``StoreError``."""
        try:
            yield
        except EngramError:
            raise
        except Exception as exc:
            if self.options.remote and self._answers():
                cause = self.cause(exc)
                raise remote_damage(self.where, action, cause, self.clear) from exc
            raise StoreError(self.explain(action, exc)) from exc

    def cause(self, exc: BaseException) -> str:
        """The first line of a LanceDB error without its prefixes and Rust source paths."""
        lines = str(exc).strip().splitlines() or [type(exc).__name__]
        cause = _SOURCE.sub("", _NOISE.sub("", lines[0])).strip()
        if len(cause) > MAX_CAUSE:
            cause = cause[:MAX_CAUSE] + "…"
        return cause

    def explain(self, action: str, exc: BaseException) -> str:
        cause = self.cause(exc)
        if self.options.remote:
            fix = (
                "check that the object store is reachable (storage_options.aws_endpoint or your "
                "network) and that the credentials and region are right, then run the command "
                "again: indexing picks up where it stopped and nothing is duplicated"
            )
        else:
            fix = (
                "check that the folder exists and is readable and writable; if the store is "
                "damaged, run `engram rebuild` to recreate it from the markdown"
            )
        return f"the LanceDB store at {self.where} could not {action} ({cause}); {fix}"

    def _answers(self) -> bool:
        """Whether the object store answers a listing right now (then a failed read failed on
        the data, not on the way to it)."""
        conn = getattr(self, "conn", None)
        if conn is None:
            return False
        try:
            conn.list_tables()
        except Exception:
            return False
        return True

    def clear(self) -> None:
        """Drop engram's tables however damaged they are (for an explicit rebuild or reset)."""
        with self.guard("drop the damaged tables"):
            self.refresh()
            for name in TABLES:
                if name in self._names:
                    self.conn.drop_table(name)
        self.forget()
        self._names.clear()

    # -- tables -------------------------------------------------------------------------------

    def table(self, name: str) -> LanceTable | None:
        """The table ``name``, or None if it does not exist (another process may create it)."""
        cached = self._tables.get(name)
        if cached is not None:
            return cached
        with self.guard(f"open table {name}"):
            if name not in self._names and self._stale():
                self.refresh()
            if name not in self._names:
                return None
            try:
                table = cast(LanceTable, self.conn.open_table(name))
            except Exception:
                self.refresh()  # dropped by another process since we listed it?
                if name not in self._names:
                    return None
                raise
        self._tables[name] = table
        return table

    def create(
        self, name: str, schema: pa.Schema, data: pa.Table | None = None, key: str = "id"
    ) -> LanceTable:
        """Create ``name`` (with ``data`` as its first rows). If another process created it
        meanwhile, use that one and upsert ``data`` into it by ``key``."""
        with self.guard(f"create table {name}"):
            try:
                table = cast(LanceTable, self.conn.create_table(name, data=data, schema=schema))
            except Exception:
                self.refresh()
                if name not in self._names:
                    raise
                table = cast(LanceTable, self.conn.open_table(name))
                if data is not None:
                    merge = table.merge_insert(key).when_matched_update_all()
                    merge.when_not_matched_insert_all().execute(data)
        self._tables[name] = table
        self._names.add(name)
        return table

    def drop(self, name: str) -> None:
        with self.guard(f"drop table {name}"):
            if name in self._names:
                self.conn.drop_table(name)
        self._tables.pop(name, None)
        self._names.discard(name)

    def forget(self) -> None:
        """Drop cached handles (after another process may have replaced the tables)."""
        self._tables.clear()

    def _stale(self) -> bool:
        """Whether another process may have created tables since we last listed them (checked
        as often as table versions are: ``read_consistency_seconds``)."""
        interval = self.options.read_consistency_seconds
        if interval is None:
            return False
        return time.monotonic() - self._listed >= interval

    def refresh(self) -> None:
        """List the tables that exist now."""
        self._names = set(self._list())
        self._listed = time.monotonic()

    def _list(self) -> list[str]:
        names: list[str] = []
        token: str | None = None
        while True:
            page: Any = self.conn.list_tables(page_token=token)
            names.extend(page.tables)
            token = page.page_token
            if not token:
                return names

    def _make_folder(self, path: Path) -> None:
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"cannot create the LanceDB folder {path} ({exc.strerror or exc}); choose "
                f"another [store] path or fix the permissions"
            ) from None
        if not path.is_dir():
            raise StoreError(f"the LanceDB path {path} is not a folder; point [store] path at one")
