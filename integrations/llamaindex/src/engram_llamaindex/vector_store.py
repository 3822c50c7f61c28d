"""``EngramVectorStore``: a LlamaIndex vector store kept in an engram collection.

Every node is a markdown file of the collection (``engram rebuild`` restores the index from the
files, ``engram search`` finds the nodes). engram embeds the text itself with the memory's
embedder, so the store keeps no vector the caller computed: build the index with
``EngramEmbedding`` (same embedder) so query vectors live in the same space.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from llama_index.core.bridge.pydantic import PrivateAttr
from llama_index.core.schema import BaseNode
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

    def __init__(self, memory: Memory, collection_name: str = DEFAULT_COLLECTION) -> None:
        super().__init__(stores_text=True, collection_name=collection_name)
        self._memory = memory
        self._collection = memory.collection(collection_name)

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

        engram embeds the text itself; an embedding a node carries is only checked for its
        dimension, which catches an index built with another embed model."""
        if not nodes:
            return []
        for node in nodes:
            if node.embedding is not None:
                check_dimension(self._collection, node.embedding)
        return self._collection.add([node_to_document(n) for n in nodes])

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


def _no_other_arguments(method: str, kwargs: dict[str, Any]) -> None:
    """An argument engram would ignore must not widen or narrow a delete silently."""
    if kwargs:
        raise ValueError(
            f"{method}() does not take {', '.join(sorted(kwargs))}; filter the nodes with "
            "delete_nodes(node_ids=..., filters=MetadataFilters(...)). Nothing was deleted"
        )
