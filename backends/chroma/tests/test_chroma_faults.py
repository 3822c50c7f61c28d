"""Faults: a Chroma server that is down or dies in the middle of ``engram index`` gives a clear
``StoreError``, and running the same index again after a restart finishes the job with nothing
lost or duplicated. A collection built with another embedder, or not built by engram at all, is
refused with the fix in the message."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pluggy
import pytest

from engram import (
    Chunk,
    DimensionMismatch,
    IdentityMismatch,
    IndexIdentity,
    Memory,
    Register,
    StoreError,
    hookimpl,
    load_config,
)
from engram.testing.host import HashEmbedder, HashEmbedderOptions, get_plugin_manager
from engram_chroma import ChromaOptions
from engram_chroma.connection import settings
from engram_chroma.store import ChromaStore

IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="markdown:400/80")
FILES = 120


def write_vault(root: Path) -> Path:
    for i in range(FILES):
        path = root / f"topic{i % 6}" / f"note{i:03}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = " ".join(f"word{(i * 31 + j) % 997}" for j in range(30))
        path.write_text(
            f"# Note {i}\n\nunique{i} talks about topic {i % 6}.\n\n## More\n\n{body}\n",
            encoding="utf-8",
        )
    return root


class ServerKiller:
    """A plugin providing the ``hash`` embedder under another name, which kills the server
    when it is asked for its ``after``-th batch (a server that goes away mid-index)."""

    def __init__(self, server: Any, after: int) -> None:
        self.server = server
        self.after = after
        self.calls = 0

    @hookimpl
    def register_embedders(self, register: Register) -> None:
        killer = self

        class KillingEmbedder(HashEmbedder):
            max_batch = 16

            def embed_batch(self, texts: list[str], input_type: Any) -> list[list[float]]:
                killer.calls += 1
                if killer.calls == killer.after:
                    killer.server.kill()
                return super().embed_batch(texts, input_type)

        register("killer", KillingEmbedder, options=HashEmbedderOptions)


def open_memory(
    root: Path, store: dict[str, Any], provider: str, pm: pluggy.PluginManager
) -> Memory:
    config = load_config(
        {
            "store": {"backend": "chroma", **store},
            "embedder": {"provider": provider},
            "cache": {"enabled": False},
        },
        start=root,
    )
    return Memory.open(config, plugin_manager=pm)


def test_server_dies_mid_index_then_a_rerun_finishes_the_job(
    own_server: Any, tmp_path: Path
) -> None:
    vault = write_vault(tmp_path / "vault")
    store_options = {"mode": "server", "host": "127.0.0.1", "port": own_server.port}
    pm = get_plugin_manager()
    killer = ServerKiller(own_server, after=9)  # the 2nd flush: 128 texts in 16s
    pm.register(killer)

    # The reference: the same vault indexed into the exact in-memory store.
    reference_config = load_config(
        {
            "store": {"backend": "memory"},
            "embedder": {"provider": "hash"},
            "cache": {"enabled": False},
        },
        start=tmp_path,
    )
    with Memory.open(reference_config) as reference:
        reference.index([vault])
        expected = {c.id: c for b in reference.store.iter_chunks() for c in b}
        expected_docs = {k: d.hash for k, d in reference.store.list_documents().items()}

    memory = open_memory(tmp_path, store_options, "killer", pm)
    with pytest.raises(StoreError) as err:
        memory.index([vault])
    memory.close()
    message = str(err.value)
    assert f"127.0.0.1:{own_server.port}" in message
    assert "chroma run" in message and "run the same command again" in message

    own_server.start()  # the same --path and port
    with open_memory(tmp_path, store_options, "hash", get_plugin_manager()) as again:
        partial = again.store.count()
        assert 0 < partial < len(expected), "the kill should land mid-index"
        report = again.index([vault])
        assert report.new + report.changed > 0
        got = {c.id: c for b in again.store.iter_chunks() for c in b}
        assert again.store.count() == len(expected) == len(got)
        assert set(got) == set(expected)
        assert all(
            got[i].text == c.text and got[i].metadata == c.metadata for i, c in expected.items()
        )
        assert {k: d.hash for k, d in again.store.list_documents().items()} == expected_docs
        for i in (0, 57, FILES - 1):
            hits = again.store.keyword_search(f"unique{i}", 10)
            assert [h.chunk.document_id for h in hits] == [
                c.document_id for c in expected.values() if f"unique{i} " in c.text
            ]
        assert again.index([vault]).unchanged == FILES


def test_a_server_that_is_down_is_a_clear_error() -> None:
    options = ChromaOptions(mode="server", host="127.0.0.1", port=_closed_port())
    with pytest.raises(StoreError) as err:
        ChromaStore(options)
    assert f"127.0.0.1:{options.port}" in str(err.value) and "chroma run" in str(err.value)


def test_a_server_that_goes_away_after_opening_is_a_clear_error(own_server: Any) -> None:
    store = ChromaStore(own_server.options())
    try:
        store.set_identity(IDENTITY)
        own_server.stop()
        for action in (
            lambda: store.upsert([Chunk(id="a", document_id="d", text="t", vector=[1, 0, 0, 0])]),
            lambda: store.vector_search([1, 0, 0, 0], 3),
            lambda: store.keyword_search("t", 3),
            store.count,
        ):
            with pytest.raises(StoreError, match="cannot reach the Chroma server"):
                action()
    finally:
        store.close()


def test_another_embedder_identity_is_refused_with_the_fix(make_store: Any) -> None:
    first: ChromaStore = make_store()
    first.set_identity(IDENTITY)
    first.upsert([Chunk(id="a", document_id="d", text="t", vector=[1, 0, 0, 0])])
    second: ChromaStore = make_store()
    other = IDENTITY.model_copy(update={"embedder": "openai", "model": "text-embedding-3-small"})
    with pytest.raises(IdentityMismatch) as err:
        second.set_identity(other)
    assert "engram rebuild" in str(err.value) and "openai" in str(err.value)
    with pytest.raises(DimensionMismatch):
        second.set_identity(IDENTITY.model_copy(update={"dimension": 8}))
    assert second.get_identity() == IDENTITY and second.count() == 1


def test_a_collection_engram_did_not_write_is_refused(chroma_dir: Path) -> None:
    path = chroma_dir / "chroma"
    client = chromadb.PersistentClient(path=str(path), settings=settings())
    theirs = client.create_collection(
        "theirs", embedding_function=None, configuration={"hnsw": {"space": "cosine"}}
    )
    theirs.add(
        ids=["x"], embeddings=np.asarray([[1, 0, 0, 0]], dtype=np.float32), documents=["not ours"]
    )
    client.create_collection("euclid", embedding_function=None)  # Chroma's default: l2
    client.close()  # type: ignore[attr-defined]
    store = ChromaStore(ChromaOptions(path=path, collection="theirs"))
    try:
        with pytest.raises(StoreError, match="did not write"):
            store.set_identity(IDENTITY)
    finally:
        store.close()
    with pytest.raises(StoreError, match="cosine"):
        ChromaStore(ChromaOptions(path=path, collection="euclid"))


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])
