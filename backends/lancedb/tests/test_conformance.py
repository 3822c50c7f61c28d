"""The shared conformance suite on LanceDB, in both modes: a local folder, and an S3 bucket on a
real S3-compatible server (moto) on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import Store
from engram.testing import StoreSuite
from engram_lancedb import LanceDBOptions
from engram_lancedb.store import LanceDBStore


class TestLanceDBLocal(StoreSuite):
    @pytest.fixture
    def store(self, tmp_path: Path) -> Iterator[Store]:
        store = LanceDBStore(LanceDBOptions(path=tmp_path / "lance"))
        yield store
        store.close()


class TestLanceDBS3(StoreSuite):
    @pytest.fixture
    def store(self, s3_server: Any) -> Iterator[Store]:
        options = LanceDBOptions(
            uri=s3_server.uri("conformance"), storage_options=s3_server.options()
        )
        store = LanceDBStore(options)
        yield store
        store.close()
