"""Nodes that arrive with their embedding: when the store knows the vector is engram's (the
index's embed model is an ``EngramEmbedding`` of the memory's embedder, given to the store or as
``Settings.embed_model``) and LlamaIndex embedded the node's text alone, engram keeps that
vector and does not embed the text again. Proved by counting what reached the real ``hash``
embedder (engram's ``CachedEmbedder`` counters, the cache off so every text is counted), on
every store. A vector of another dimension is an error and nothing is written."""

from __future__ import annotations

import math
from typing import Protocol, cast

import numpy as np
import pytest
from llama_index.core import Settings, StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode

from engram import CollectionDocument, DimensionMismatch, InvalidVector, Memory
from engram_llamaindex import EngramEmbedding, EngramVectorStore
from support import MemoryFactory

TEXTS = [
    "Postgres replication lag is paged to the database team after five minutes.",
    "Kubernetes ingress routes external traffic to the web pods.",
    "Stripe webhooks are verified with the signing secret before processing.",
]


def _nodes() -> list[TextNode]:
    return [TextNode(id_=f"n{i}", text=text) for i, text in enumerate(TEXTS)]


class _Counts(Protocol):
    """What engram's embedder in front of the configured one counts (``CachedEmbedder``)."""

    cache: object
    texts_embedded: int


def _counted(open_memory: MemoryFactory) -> tuple[Memory, _Counts]:
    """A memory without the embedding cache: every text reaches the hash embedder, counted."""
    memory = open_memory(cache={"enabled": False})
    embedder = cast(_Counts, memory.embedder)
    assert embedder.cache is None and embedder.texts_embedded == 0
    return memory, embedder


def _index(store: EngramVectorStore, nodes: list[TextNode], model: EngramEmbedding) -> None:
    VectorStoreIndex(
        nodes, storage_context=StorageContext.from_defaults(vector_store=store), embed_model=model
    )


def test_engram_vectors_are_stored_not_embedded_again(open_memory: MemoryFactory) -> None:
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    store = EngramVectorStore(memory, embed_model=model)
    _index(store, _nodes(), model)
    # LlamaIndex embedded each text once (through engram's embedder); engram added nothing.
    assert counter.texts_embedded == len(TEXTS)
    hits = store.client.search_by_vector(model.get_query_embedding("replication lag"), k=1)
    assert [h.document.id for h in hits] == ["n0"]


def test_settings_embed_model_is_recognised(
    open_memory: MemoryFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    monkeypatch.setattr(Settings, "_embed_model", model)
    _index(EngramVectorStore(memory), _nodes(), model)
    assert counter.texts_embedded == len(TEXTS)


def test_without_knowing_the_model_engram_embeds_again(open_memory: MemoryFactory) -> None:
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    assert getattr(Settings, "_embed_model", None) is None  # no test leaves one there
    _index(EngramVectorStore(memory), _nodes(), model)
    assert counter.texts_embedded == 2 * len(TEXTS)


def test_metadata_in_the_embedded_text_means_embedding_again(open_memory: MemoryFactory) -> None:
    """LlamaIndex embeds "team: db" with the text; engram indexes the text alone, so it keeps
    its own vector of that text (what ``engram rebuild`` would make)."""
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    nodes = [TextNode(id_="m", text=TEXTS[0], metadata={"team": "db"})]
    _index(EngramVectorStore(memory, embed_model=model), nodes, model)
    assert counter.texts_embedded == 2


def test_the_given_vector_is_the_one_stored(open_memory: MemoryFactory) -> None:
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    store = EngramVectorStore(memory, embed_model=model)
    own = model.get_text_embedding(TEXTS[1])
    given = list(np.roll(np.asarray(own), 7))  # another unit vector, so the test can tell
    before = counter.texts_embedded
    store.add([TextNode(id_="n1", text=TEXTS[1], embedding=given)])
    assert counter.texts_embedded == before
    [(hit, stored)] = store.client.candidates_with_vectors(given, k=1)
    assert hit.document.id == "n1"
    assert np.allclose(stored, given, atol=1e-6)


def test_a_private_span_is_embedded_without_it(open_memory: MemoryFactory) -> None:
    """The node's vector was made of its private words too: never stored, engram embeds the
    text it keeps."""
    memory, counter = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    store = EngramVectorStore(memory, embed_model=model)
    text = "Deploys need the <private>hunter2</private> token on Fridays."
    node = TextNode(id_="p", text=text, embedding=model.get_text_embedding("unrelated words"))
    before = counter.texts_embedded
    store.add([node])
    assert counter.texts_embedded == before + 1
    [stored_doc] = store.client.get(["p"])
    assert "hunter2" not in stored_doc.text
    kept = model.get_text_embedding(stored_doc.text)
    [(_, stored)] = store.client.candidates_with_vectors(kept, k=1)
    assert np.allclose(stored, kept, atol=1e-6)


def test_a_vector_of_another_dimension_is_an_error_and_nothing_is_written(
    open_memory: MemoryFactory,
) -> None:
    memory, _ = _counted(open_memory)
    model = EngramEmbedding.from_memory(memory)
    store = EngramVectorStore(memory, embed_model=model)
    good = TextNode(id_="ok", text=TEXTS[0], embedding=model.get_text_embedding(TEXTS[0]))
    bad = TextNode(id_="bad", text=TEXTS[1], embedding=[0.5] * (model.dimension + 1))
    with pytest.raises(DimensionMismatch):
        store.add([good, bad])
    assert store.client.count() == 0
    # The collection refuses it the same way when called directly, and NaN too.
    docs = [CollectionDocument(id="c", text=TEXTS[2])]
    with pytest.raises(DimensionMismatch, match="document 'c'"):
        store.client.add(docs, vectors={"c": [0.5] * (model.dimension - 1)})
    nan = [math.nan] * model.dimension
    with pytest.raises(InvalidVector, match="NaN"):
        store.client.add(docs, vectors={"c": nan})
    assert store.client.count() == 0
