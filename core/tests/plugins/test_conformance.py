"""The reference parts pass their own suites: the bar is reachable, and the suite is sound."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.protocols import Embedder, Searcher, Store
from engram.search import HybridSearcher
from engram.testing import EmbedderSuite, SearcherSuite, StoreSuite


class TestMemoryStore(StoreSuite):
    @pytest.fixture
    def store(self) -> Iterator[Store]:
        store = MemoryStore(MemoryStoreOptions())
        yield store
        store.close()


class TestHashEmbedder(EmbedderSuite):
    @pytest.fixture
    def embedder(self) -> Embedder:
        return HashEmbedder(HashEmbedderOptions(dimension=64))


class TestHybridSearcher(SearcherSuite):
    @pytest.fixture
    def searcher(self) -> Searcher:
        return HybridSearcher()
