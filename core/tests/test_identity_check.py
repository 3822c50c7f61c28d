"""One identity check (``stores.checks.check_identity``): a store recording an identity, the
memory's reads and writes (``Writer``) and the searcher's query refuse the same mismatch with the
same message, which names both identities and the fix; a read accepts another chunker, a write
not."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.config import SearchConfig, load_config
from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore
from engram.errors import DimensionMismatch, ExtractorError, IdentityMismatch
from engram.memories.writer import Writer
from engram.protocols import Extractor, embedder_identity
from engram.search import HybridSearcher


def _no_extractor() -> Extractor:
    raise ExtractorError("not needed here")


def _message(exc: pytest.ExceptionInfo[IdentityMismatch]) -> str:
    return str(exc.value)


def test_store_writer_and_searcher_refuse_with_one_message(tmp_path: Path) -> None:
    config = load_config({"store": {"backend": "memory"}}, start=tmp_path)
    chunker = config.chunking.describe()
    built_with = HashEmbedder(HashEmbedderOptions(dimension=256))
    configured = HashEmbedder(HashEmbedderOptions(dimension=64))
    store = MemoryStore()
    store.set_identity(embedder_identity(built_with, chunker))
    writer = Writer(config, store, configured, _no_extractor)
    messages = []
    with pytest.raises(DimensionMismatch) as by_store:
        store.set_identity(embedder_identity(configured, chunker))
    messages.append(_message(by_store))
    for writing in (True, False):
        with pytest.raises(DimensionMismatch) as by_writer:
            writer.check_identity(writing=writing)
        messages.append(_message(by_writer))
    with pytest.raises(DimensionMismatch) as by_searcher:
        HybridSearcher(SearchConfig()).search("coffee", store, configured)
    messages.append(_message(by_searcher))
    assert len(set(messages)) == 1
    assert "256 dims" in messages[0] and "64 dims" in messages[0]
    assert "engram rebuild" in messages[0] and "switch back" in messages[0]


def test_a_read_takes_another_chunker_and_a_write_refuses_it(tmp_path: Path) -> None:
    config = load_config({"store": {"backend": "memory"}}, start=tmp_path)
    embedder = HashEmbedder(HashEmbedderOptions(dimension=32))
    store = MemoryStore()
    store.set_identity(embedder_identity(embedder, "another chunker"))
    writer = Writer(config, store, embedder, _no_extractor)
    writer.check_identity(writing=False)
    HybridSearcher(SearchConfig()).search("coffee", store, embedder)
    with pytest.raises(IdentityMismatch, match="another chunker") as refused:
        writer.check_identity(writing=True)
    assert not isinstance(refused.value, DimensionMismatch)
    assert store.get_identity() == embedder_identity(embedder, "another chunker")
