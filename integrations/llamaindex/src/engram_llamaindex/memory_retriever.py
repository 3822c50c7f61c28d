"""engram's search over the whole memory (stored memories, vault notes, sessions) as a
LlamaIndex retriever: ``Memory.search``, the one search entry ``engram search``, the agent tools
and the dashboard use, so the same question gets the same nodes in the same order here, a
question that names a memory type ("what are my preferences") included.

``EngramVectorStore`` keeps LlamaIndex's own nodes in a collection; this retriever reads what
the agent and the user remembered.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from engram import Filter, Hit, Memory, MemoryType, SearchMode

__all__ = ["EngramMemoryRetriever"]


class EngramMemoryRetriever(BaseRetriever):
    """``EngramMemoryRetriever(memory, k=6, type="decision", filter=Eq(field="scope",
    value="user"))``: engram filters over the chunks' metadata fields (``type``, ``scope``,
    ``tags``, ``source`` …); ``mode`` None is ``[search] mode``. Each node's id is the hit's
    chunk id, its metadata the chunk's with ``path`` (the file, relative to the project)."""

    def __init__(
        self,
        memory: Memory,
        *,
        k: int = 6,
        mode: SearchMode | None = None,
        type: MemoryType | None = None,
        filter: Filter | None = None,
        include_superseded: bool = False,
        **kwargs: Any,
    ) -> None:
        if k < 1:
            raise ValueError(f"k must be 1 or more, got {k}")
        super().__init__(**kwargs)
        self.memory = memory
        self.k = k
        self.mode = mode
        self.type = type
        self.filter = filter
        self.include_superseded = include_superseded

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        result = self.memory.search(
            query_bundle.query_str,
            mode=self.mode,
            limit=self.k,
            filter=self.filter,
            include_superseded=self.include_superseded,
            type=self.type,
        )
        return [_node(hit) for hit in result.hits]


def _node(hit: Hit) -> NodeWithScore:
    metadata = {**hit.chunk.metadata, "path": hit.chunk.document_id}
    node = TextNode(id_=hit.chunk.id, text=hit.chunk.text, metadata=metadata)
    return NodeWithScore(node=node, score=hit.score)
