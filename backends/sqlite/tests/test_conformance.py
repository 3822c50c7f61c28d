"""The shared conformance suite (engram.testing.StoreSuite) on a real SQLite file."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Store
from engram.testing import StoreSuite
from engram_sqlite import SQLiteOptions, SQLiteStore


class TestSQLiteStore(StoreSuite):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        store = SQLiteStore(SQLiteOptions(path=tmp_path / "index.sqlite"))
        yield store
        store.close()
