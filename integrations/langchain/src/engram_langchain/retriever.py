"""engram's hybrid search (keyword + vector, fused) over a collection as a LangChain retriever.

A vector store's default retriever ranks by vectors alone; this one is what ``engram search``
does, so exact names, error codes and rare words find their documents too.
"""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, Field

from engram import SearchMode
from engram_langchain.filters import FilterLike
from engram_langchain.vectorstore import EngramVectorStore


class EngramRetriever(BaseRetriever):
    """``EngramRetriever(store=store, k=4, mode="hybrid", filter={"team": "db"})``; ``k``,
    ``mode`` and ``filter`` can also be given per call: ``retriever.invoke(query, k=2)``.

    Each document's score is put in its metadata under ``score_key`` (``"score"``, where
    LangChain's guide to retriever scores puts it; it shadows a stored key of that name in the
    results only); ``score_key=None`` returns the metadata exactly as stored."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    store: EngramVectorStore
    k: int = Field(default=4, ge=1)
    mode: SearchMode = "hybrid"
    filter: Any = None
    score_key: str | None = "score"

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        k = int(kwargs.get("k", self.k))
        mode: SearchMode = kwargs.get("mode", self.mode)
        flt: FilterLike = kwargs.get("filter", self.filter)
        scored = self.store.search_with_score(query, k=k, mode=mode, filter=flt)
        if self.score_key is None:
            return [doc for doc, _ in scored]
        return [
            doc.model_copy(update={"metadata": {**doc.metadata, self.score_key: score}})
            for doc, score in scored
        ]
