"""A LlamaIndex ``VectorStoreQuery`` run as an engram collection search."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.indices.query.embedding_utils import get_top_k_mmr_embeddings
from llama_index.core.vector_stores.types import VectorStoreQuery, VectorStoreQueryMode

from engram import And, Collection, CollectionHit, DimensionMismatch, Filter, In
from engram_llamaindex.filters import to_engram_filter
from engram_llamaindex.nodes import NODE_ID, REF_DOC_ID

__all__ = ["SUPPORTED_MODES", "UnsupportedQueryMode", "check_dimension", "run_query"]

SUPPORTED_MODES = (
    VectorStoreQueryMode.DEFAULT,
    VectorStoreQueryMode.HYBRID,
    VectorStoreQueryMode.TEXT_SEARCH,
    VectorStoreQueryMode.MMR,
)
MMR_PREFETCH_FACTOR = 4  # candidates per result for MMR, as LlamaIndex's Chroma store does


class UnsupportedQueryMode(ValueError):
    """A query mode engram has no search for (SVM, sparse…)."""


def run_query(
    collection: Collection, query: VectorStoreQuery, **kwargs: Any
) -> list[CollectionHit]:
    """The hits for ``query``: vector search for ``DEFAULT``, engram's hybrid search for
    ``HYBRID``, its keyword search for ``TEXT_SEARCH``, and maximal marginal relevance over
    the stored vectors of the nearest candidates for ``MMR`` (``mmr_threshold``,
    ``mmr_prefetch_factor`` or ``mmr_prefetch_k`` in ``kwargs``); ``filters``, ``doc_ids`` and
    ``node_ids`` all narrow the search (an empty list of ids does not: ``as_retriever`` passes
    ``node_ids=[]`` for every store that keeps its own text, as LlamaIndex's own stores read it)."""
    mode = VectorStoreQueryMode(query.mode)
    flt = query_filter(query)
    if query.similarity_top_k <= 0:
        return []
    if mode == VectorStoreQueryMode.DEFAULT:
        return _vector(collection, query, flt)
    if mode == VectorStoreQueryMode.MMR:
        return _mmr(collection, query, flt, **kwargs)
    if mode == VectorStoreQueryMode.HYBRID:
        k = query.hybrid_top_k or query.similarity_top_k
        return collection.search(_text(query), k=k, mode="hybrid", filter=flt)
    if mode == VectorStoreQueryMode.TEXT_SEARCH:
        k = query.sparse_top_k or query.similarity_top_k
        return collection.search(_text(query), k=k, mode="keyword", filter=flt)
    supported = ", ".join(m.name for m in SUPPORTED_MODES)
    raise UnsupportedQueryMode(
        f"query mode {mode.name} ({mode.value!r}) is not supported by EngramVectorStore; "
        f"use one of {supported}"
    )


def query_filter(query: VectorStoreQuery) -> Filter | None:
    """``query.filters`` and the ``doc_ids``/``node_ids`` restrictions as one engram filter."""
    parts: list[Filter] = []
    metadata = to_engram_filter(query.filters)
    if metadata is not None:
        parts.append(metadata)
    if query.doc_ids:
        parts.append(In(field=REF_DOC_ID, values=list(query.doc_ids)))
    if query.node_ids:
        parts.append(In(field=NODE_ID, values=list(query.node_ids)))
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(filters=parts)


def _vector(
    collection: Collection, query: VectorStoreQuery, flt: Filter | None
) -> list[CollectionHit]:
    k = query.similarity_top_k
    if query.query_embedding is None:
        return collection.search(_text(query), k=k, mode="vector", filter=flt)
    check_dimension(collection, query.query_embedding)
    return collection.search_by_vector(query.query_embedding, k=k, filter=flt)


def _mmr(
    collection: Collection, query: VectorStoreQuery, flt: Filter | None, **kwargs: Any
) -> list[CollectionHit]:
    k = query.similarity_top_k
    vector = query.query_embedding
    if vector is None:
        vector = collection.embed_query(_text(query))
    check_dimension(collection, vector)
    fetch = kwargs.get("mmr_prefetch_k") or k * int(
        kwargs.get("mmr_prefetch_factor") or MMR_PREFETCH_FACTOR
    )
    found = collection.candidates_with_vectors(vector, k=max(k, int(fetch)), filter=flt)
    if not found:
        return []
    scores, picked = get_top_k_mmr_embeddings(
        list(vector),
        [v for _, v in found],
        similarity_top_k=k,
        embedding_ids=list(range(len(found))),
        mmr_threshold=kwargs.get("mmr_threshold"),
    )
    return [
        found[i][0].model_copy(update={"score": score})
        for i, score in zip(picked, scores, strict=True)
    ]


def check_dimension(collection: Collection, vector: Sequence[float]) -> None:
    if len(vector) != collection.dimension:
        raise DimensionMismatch(
            f"an embedding of {len(vector)} dimensions was given but this engram memory embeds "
            f"with {collection.dimension}: the index was given another embed model. Use "
            f"embed_model=EngramEmbedding.from_memory(memory) so queries and nodes share "
            f"engram's embedder"
        )


def _text(query: VectorStoreQuery) -> str:
    if not query.query_str:
        raise ValueError(
            f"query mode {VectorStoreQueryMode(query.mode).name} searches by text but the query "
            f"has no query_str; pass the question text (a retriever does this for you)"
        )
    return query.query_str
