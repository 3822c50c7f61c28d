"""LlamaIndex's documented way to use a vector store, end to end on every engram store:
``VectorStoreIndex.from_documents(docs, storage_context=StorageContext.from_defaults(
vector_store=store), embed_model=...)`` then ``index.as_retriever().retrieve(...)``. No LLM is
involved in retrieval; the one query engine test gives LlamaIndex's LLM slot its ``MockLLM``
(that slot is the network edge, not engram)."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core import Document, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from engram import DimensionMismatch
from engram_llamaindex import EngramEmbedding, EngramVectorStore, UnsupportedQueryMode

DOCS = [
    Document(
        id_="runbook",
        text="Postgres replication lag is paged to the database team after five minutes.",
        metadata={"team": "db", "year": 2024},
    ),
    Document(
        id_="ingress",
        text="Kubernetes ingress routes external traffic to the web pods.",
        metadata={"team": "platform", "year": 2023},
    ),
    Document(
        id_="stripe",
        text="Stripe webhooks are verified with the signing secret before processing.",
        metadata={"team": "payments", "year": 2025},
    ),
]


def _index(store: EngramVectorStore, embed_model: EngramEmbedding) -> VectorStoreIndex:
    return VectorStoreIndex.from_documents(
        DOCS,
        storage_context=StorageContext.from_defaults(vector_store=store),
        embed_model=embed_model,
    )


def test_from_documents_then_retrieve_finds_the_right_node(
    store: EngramVectorStore, embed_model: EngramEmbedding
) -> None:
    index = _index(store, embed_model)
    hits = index.as_retriever(similarity_top_k=1).retrieve("postgres replication lag paging")
    assert len(hits) == 1
    assert hits[0].node.ref_doc_id == "runbook"
    assert hits[0].node.get_content() == DOCS[0].text
    assert hits[0].node.metadata == {"team": "db", "year": 2024}
    assert hits[0].score is not None and 0.0 < hits[0].score <= 1.0 + 1e-6
    assert store.client.count() == 3


def test_retriever_filters_hybrid_and_keyword_modes(
    store: EngramVectorStore, embed_model: EngramEmbedding
) -> None:
    index = _index(store, embed_model)
    recent = MetadataFilters(filters=[MetadataFilter(key="year", operator=">=", value=2024)])
    hits = index.as_retriever(similarity_top_k=3, filters=recent).retrieve("traffic routing")
    assert sorted(h.node.ref_doc_id or "" for h in hits) == ["runbook", "stripe"]
    for mode in ("hybrid", "text_search"):
        retriever = index.as_retriever(similarity_top_k=1, vector_store_query_mode=mode)
        found = retriever.retrieve("stripe webhooks signing secret")
        assert [h.node.ref_doc_id for h in found] == ["stripe"], mode


def test_delete_ref_doc_through_the_index_removes_its_nodes(
    store: EngramVectorStore, embed_model: EngramEmbedding
) -> None:
    index = _index(store, embed_model)
    index.delete_ref_doc("runbook")
    assert store.client.count() == 2
    hits = index.as_retriever(similarity_top_k=3).retrieve("postgres replication lag")
    assert "runbook" not in [h.node.ref_doc_id for h in hits]
    assert (
        store.get_nodes(filters=MetadataFilters(filters=[MetadataFilter(key="team", value="db")]))
        == []
    )


def test_query_engine_with_mock_llm_gets_the_retrieved_context(
    store: EngramVectorStore, embed_model: EngramEmbedding
) -> None:
    index = _index(store, embed_model)
    engine = index.as_query_engine(llm=MockLLM(), similarity_top_k=1)
    response = engine.query("kubernetes ingress traffic")
    assert [n.node.ref_doc_id for n in response.source_nodes] == ["ingress"]


def test_async_variants_use_the_same_store(
    store: EngramVectorStore, embed_model: EngramEmbedding
) -> None:
    nodes = [TextNode(id_=d.doc_id, text=d.text, metadata=d.metadata) for d in DOCS]

    async def scenario() -> list[str]:
        ids = await store.async_add(nodes)
        query = VectorStoreQuery(
            query_embedding=await embed_model.aget_query_embedding("stripe webhooks"),
            similarity_top_k=1,
        )
        best = await store.aquery(query)
        await store.adelete_nodes(["ingress"])
        left = await store.aget_nodes()
        await store.aclear()
        return [*ids, *(best.ids or []), "|", *sorted(n.node_id for n in left)]

    got = asyncio.run(scenario())
    assert got == ["runbook", "ingress", "stripe", "stripe", "|", "runbook", "stripe"]
    assert store.client.count() == 0


def test_another_embed_model_is_a_clear_error(store: EngramVectorStore) -> None:
    node = TextNode(id_="n", text="some text", embedding=[0.1, 0.2, 0.3])
    with pytest.raises(DimensionMismatch, match="EngramEmbedding"):
        store.add([node])
    with pytest.raises(DimensionMismatch, match="EngramEmbedding"):
        store.query(VectorStoreQuery(query_embedding=[0.1, 0.2, 0.3]))


def test_unsupported_mode_and_missing_text_are_named(store: EngramVectorStore) -> None:
    store.add([TextNode(id_="n", text="some text")])
    with pytest.raises(UnsupportedQueryMode, match="SVM"):
        store.query(VectorStoreQuery(query_str="text", mode=VectorStoreQueryMode.SVM))
    with pytest.raises(ValueError, match="query_str"):
        store.query(VectorStoreQuery(mode=VectorStoreQueryMode.HYBRID))


def test_default_mode_without_embedding_embeds_the_query_text(store: EngramVectorStore) -> None:
    store.add([TextNode(id_=d.doc_id, text=d.text) for d in DOCS])
    result = store.query(VectorStoreQuery(query_str="kubernetes ingress", similarity_top_k=1))
    assert result.ids == ["ingress"]


def test_the_embed_model_never_sends_private_spans(embed_model: EngramEmbedding) -> None:
    public = embed_model.get_query_embedding("token  rotated")
    assert embed_model.get_query_embedding("token <private>sk-123</private> rotated") == public
    assert embed_model.get_text_embedding("token <Private>x</private> rotated") == public
    assert embed_model.get_query_embedding("token sk-123 rotated") != public


def test_mmr_picks_diverse_nodes_from_stored_vectors(store: EngramVectorStore) -> None:
    store.add(
        [
            TextNode(id_="d1", text="postgres replication lag alerts", metadata={"g": 1}),
            TextNode(id_="d2", text="postgres replication lag alerts!", metadata={"g": 1}),
            TextNode(id_="d3", text="kubernetes ingress certificates", metadata={"g": 2}),
        ]
    )
    plain = store.query(VectorStoreQuery(query_str="postgres replication lag", similarity_top_k=2))
    assert sorted(plain.ids or []) == ["d1", "d2"]
    mmr = VectorStoreQuery(
        query_str="postgres replication lag", similarity_top_k=2, mode=VectorStoreQueryMode.MMR
    )
    diverse = store.query(mmr, mmr_threshold=0.1)
    assert (diverse.ids or [])[0] in ("d1", "d2") and "d3" in (diverse.ids or [])
    only = VectorStoreQuery(
        query_str="postgres",
        similarity_top_k=3,
        mode=VectorStoreQueryMode.MMR,
        filters=MetadataFilters(filters=[MetadataFilter(key="g", value=2)]),
    )
    assert store.query(only).ids == ["d3"]


def test_a_delete_with_arguments_engram_does_not_take_deletes_nothing(
    store: EngramVectorStore,
) -> None:
    store.add([TextNode(id_=d.doc_id, text=d.text) for d in DOCS])
    before = store.client.count()
    with pytest.raises(ValueError, match="where"):
        store.delete(DOCS[0].doc_id, where={"x": 1})
    with pytest.raises(ValueError, match="ref_doc_ids"):
        store.delete_nodes(ref_doc_ids=["a"])
    assert store.client.count() == before
