"""The shared conformance suite (engram.testing.StoreSuite) in both of Chroma's modes: embedded
in a real folder, and against a real ``chroma run`` server on 127.0.0.1."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import Store
from engram.testing import OriginViewSuite, StoreSuite
from engram_chroma import ChromaOptions
from engram_chroma.store import ChromaStore


class TestChromaEmbedded(StoreSuite):
    @pytest.fixture
    def store(self, chroma_dir: Path) -> Iterator[Store]:
        store = ChromaStore(ChromaOptions(path=chroma_dir / "chroma"))
        yield store
        store.close()


class TestChromaServer(StoreSuite):
    @pytest.fixture
    def store(self, chroma_server: Any) -> Iterator[Store]:
        store = ChromaStore(chroma_server.options())
        yield store
        store.close()


class TestChromaServerThroughAnOrigin(OriginViewSuite):
    """The suite through one machine's view of a shared collection (what every engram command on
    a Chroma server uses)."""

    @pytest.fixture
    def shared_store(self, chroma_server: Any) -> Store:
        return ChromaStore(chroma_server.options())
