"""engram's search over the whole memory (stored memories, vault notes, sessions) as a LangChain
retriever: ``Memory.search``, the one search entry ``engram search``, the agent tools and the
dashboard use, so the same question gets the same documents in the same order here, a question
that names a memory type ("what are my preferences") included.

``EngramRetriever`` searches one collection of LangChain documents; this one searches what the
agent and the user remembered.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from engram import Hit, Memory, MemoryType, SearchMode
from engram_langchain.filters import FilterLike, to_filter


class EngramMemoryRetriever(BaseRetriever):
    """``EngramMemoryRetriever(memory=memory, k=6, type="decision", filter={"scope": "user"})``;
    ``k``, ``mode``, ``type`` and ``filter`` can also be given per call:
    ``retriever.invoke("what did we decide", k=3)``. Filters name the chunks' metadata fields
    (``type``, ``scope``, ``tags``, ``source`` …). ``mode`` None is ``[search] mode``.

    Each document's ``id`` is the hit's chunk id and its metadata the chunk's, with ``path``
    (the file, relative to the project) and the score under ``score_key`` (None: no score)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: Memory
    k: int = Field(default=6, ge=1)
    mode: SearchMode | None = None
    type: MemoryType | None = None
    filter: Any = None
    include_superseded: bool = False
    score_key: str | None = "score"

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        flt: FilterLike = kwargs.get("filter", self.filter)
        result = self.memory.search(
            query,
            mode=kwargs.get("mode", self.mode),
            limit=int(kwargs.get("k", self.k)),
            filter=to_filter(flt),
            include_superseded=self.include_superseded,
            type=kwargs.get("type", self.type),
        )
        return [self._document(hit) for hit in result.hits]

    def _document(self, hit: Hit) -> Document:
        metadata = {**hit.chunk.metadata, "path": hit.chunk.document_id}
        if self.score_key is not None:
            metadata[self.score_key] = hit.score
        return Document(id=hit.chunk.id, page_content=hit.chunk.text, metadata=metadata)
