"""``EngramVectorStore``: a LlamaIndex vector store kept in an engram collection.

Every node is a markdown file of the collection (``engram rebuild`` restores the index from the
files, ``engram search`` finds the nodes). Build the index with ``EngramEmbedding`` (the
memory's embedder) so node and query vectors live in the space engram keeps.

A node that arrives with its ``embedding`` is not embedded again when the store knows that
vector is engram's: the embed model is an ``EngramEmbedding`` of the same provider, model and
dimension (given as ``embed_model=``, or ``Settings.embed_model``; LlamaIndex nodes carry no
model name), and the text LlamaIndex embedded is the node's text itself (no metadata in it,
no ``<private>`` span), the text engram indexes, so ``engram rebuild`` would make the same
vector. Otherwise engram embeds the text itself. Either way a vector of another dimension is an
error and nothing is written.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core import Settings
from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.types import (
    BasePydanticVectorStore,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)

from engram import (
    Collection,
    CollectionDocument,
    EngramConfig,
    Eq,
    Filter,
    Memory,
    load_config,
    matches,
)
from engram_llamaindex.embedding import EngramEmbedding
from engram_llamaindex.filters import to_engram_filter
from engram_llamaindex.nodes import REF_DOC_ID, document_to_node, node_to_document
from engram_llamaindex.query import check_dimension, run_query

__all__ = ["DEFAULT_COLLECTION", "EngramVectorStore"]

DEFAULT_COLLECTION = "llamaindex"


class EngramVectorStore(BasePydanticVectorStore):
    """LlamaIndex nodes in the engram collection ``collection_name`` of ``memory``.

    ``stores_text`` is true: nodes come back whole (text, metadata, relationships) from the
    markdown files, so an index needs no docstore. Queries: ``DEFAULT`` is vector search with
    ``query_embedding`` (or ``query_str`` embedded by engram when no embedding is given),
    ``HYBRID`` is engram's hybrid search and ``TEXT_SEARCH`` its keyword search, both on
    ``query_str``; ``MMR`` re-ranks the nearest candidates by their stored vectors. Filters are
    ``MetadataFilters`` on the nodes' metadata keys.
    """

    stores_text: bool = True
    is_embedding_query: bool = True
    collection_name: str = DEFAULT_COLLECTION
    _memory: Memory = PrivateAttr()
    _collection: Collection = PrivateAttr()
    _owns_memory: bool = PrivateAttr(default=False)
    _embed_model: BaseEmbedding | None = PrivateAttr(default=None)

    def __init__(
        self,
        memory: Memory,
        collection_name: str = DEFAULT_COLLECTION,
        *,
        embed_model: BaseEmbedding | None = None,
    ) -> None:
        """``embed_model``: the model the index embeds nodes with, when it is not
        ``Settings.embed_model``; an ``EngramEmbedding`` of this memory's embedder lets the
        store keep the nodes' vectors instead of embedding their text again."""
        super().__init__(stores_text=True, collection_name=collection_name)
        self._memory = memory
        self._collection = memory.collection(collection_name)
        self._embed_model = embed_model

    @classmethod
    def from_config(
        cls,
        config: EngramConfig | None = None,
        *,
        collection_name: str = DEFAULT_COLLECTION,
        overrides: dict[str, Any] | None = None,
    ) -> EngramVectorStore:
        """A store over a memory opened from ``config`` (default: engram.toml, user config and
        ``ENGRAM_*`` as the CLI reads them); ``close()`` closes that memory."""
        memory = Memory.open(config or load_config(overrides))
        store = cls(memory, collection_name)
        store._owns_memory = True
        return store

    @classmethod
    def class_name(cls) -> str:
        return "EngramVectorStore"

    def _engram_vectors(self) -> bool:
        """True when the nodes' embeddings are known to be engram's (see the module doc)."""
        # Settings' private slot: reading the public one would build LlamaIndex's default
        # (OpenAI) model when none is set.
        model = self._embed_model or getattr(Settings, "_embed_model", None)
        return isinstance(model, EngramEmbedding) and model.embeds_like(self._memory.embedder)

    @property
    def client(self) -> Collection:
        """The engram collection the nodes live in."""
        return self._collection

    @property
    def memory(self) -> Memory:
        return self._memory

    def close(self) -> None:
        """Close the memory if this store opened it (``from_config``); otherwise do nothing."""
        if self._owns_memory:
            self._memory.close()
            self._owns_memory = False

    # -- writing -------------------------------------------------------------------------------
    def add(self, nodes: Sequence[BaseNode], **add_kwargs: Any) -> list[str]:
        """Write the nodes (same id = overwrite) and index them; returns their ids in order.

        A node's embedding is kept instead of embedding its text again when it is known to be
        engram's (the module doc says when); any embedding is checked for its dimension, which
        catches an index built with another embed model."""
        if not nodes:
            return []
        for node in nodes:
            if node.embedding is not None:
                check_dimension(self._collection, node.embedding)
        trusted = self._engram_vectors()
        vectors = {
            n.node_id: n.embedding
            for n in nodes
            if trusted and n.embedding is not None and _embedded_as_is(n)
        }
        return self._collection.add([node_to_document(n) for n in nodes], vectors=vectors)

    def delete(self, ref_doc_id: str, **delete_kwargs: Any) -> None:
        """Delete every node whose source document is ``ref_doc_id``; any other argument is
        refused before anything is deleted."""
        _no_other_arguments("delete", delete_kwargs)
        stale = self._find(None, Eq(field=REF_DOC_ID, value=ref_doc_id))
        self._collection.delete([doc.id for doc in stale])

    def delete_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
        **delete_kwargs: Any,
    ) -> None:
        """Delete the nodes with these ids that match ``filters`` (either may be left out; with
        neither, every node goes, as LlamaIndex's ``SimpleVectorStore`` does); any other
        argument is refused before anything is deleted."""
        _no_other_arguments("delete_nodes", delete_kwargs)
        stale = self._find(node_ids, to_engram_filter(filters))
        self._collection.delete([doc.id for doc in stale])

    def clear(self) -> None:
        """Delete every node of the collection."""
        self._collection.clear()

    # -- reading -------------------------------------------------------------------------------
    def get_nodes(
        self,
        node_ids: list[str] | None = None,
        filters: MetadataFilters | None = None,
    ) -> list[BaseNode]:
        """The nodes with these ids (in that order) that match ``filters``; all when neither
        is given."""
        return [document_to_node(d) for d in self._find(node_ids, to_engram_filter(filters))]

    def query(self, query: VectorStoreQuery, **kwargs: Any) -> VectorStoreQueryResult:
        """The ``similarity_top_k`` best nodes for ``query``, best first."""
        hits = run_query(self._collection, query, **kwargs)
        nodes = [document_to_node(hit.document) for hit in hits]
        return VectorStoreQueryResult(
            nodes=nodes,
            similarities=[hit.score for hit in hits],
            ids=[node.node_id for node in nodes],
        )

    def _find(self, node_ids: list[str] | None, flt: Filter | None) -> list[CollectionDocument]:
        """Documents by id (all when ``node_ids`` is None) that match ``flt``, checked with
        engram's reference filter semantics (the ones every store implements)."""
        ids = self._collection.ids() if node_ids is None else node_ids
        return [d for d in self._collection.get(ids) if matches(flt, d.metadata)]


def _embedded_as_is(node: BaseNode) -> bool:
    """True when the text LlamaIndex embedded for ``node`` is its text alone (no metadata)."""
    return node.get_content(metadata_mode=MetadataMode.EMBED) == node.get_content(
        metadata_mode=MetadataMode.NONE
    )


def _no_other_arguments(method: str, kwargs: dict[str, Any]) -> None:
    """An argument engram would ignore must not widen or narrow a delete silently."""
    if kwargs:
        raise ValueError(
            f"{method}() does not take {', '.join(sorted(kwargs))}; filter the nodes with "
            "delete_nodes(node_ids=..., filters=MetadataFilters(...)). Nothing was deleted"
        )
