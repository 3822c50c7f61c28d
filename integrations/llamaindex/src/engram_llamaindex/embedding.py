"""``EngramEmbedding``: engram's configured embedder (behind its shared cache) as a LlamaIndex
embed model, so an index over ``EngramVectorStore`` embeds queries in the same space as the
vectors engram keeps."""

from __future__ import annotations

from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding
from llama_index.core.bridge.pydantic import PrivateAttr

from engram import Embedder, Memory

__all__ = ["EngramEmbedding"]


class EngramEmbedding(BaseEmbedding):
    """A LlamaIndex ``BaseEmbedding`` over an engram ``Embedder``.

    Documents are embedded with ``input_type="document"`` and queries with ``"query"``, which
    asymmetric models (Voyage, E5) need. ``model_name`` is ``<provider>/<model>``.
    """

    dimension: int = 0
    _embedder: Embedder = PrivateAttr()

    def __init__(self, embedder: Embedder, **kwargs: Any) -> None:
        kwargs.setdefault("model_name", f"{embedder.name}/{embedder.model}")
        super().__init__(dimension=embedder.dimension, **kwargs)
        self._embedder = embedder

    @classmethod
    def from_memory(cls, memory: Memory, **kwargs: Any) -> EngramEmbedding:
        """The embedder ``memory`` is configured with, through its embedding cache."""
        return cls(memory.embedder, **kwargs)

    @classmethod
    def class_name(cls) -> str:
        return "EngramEmbedding"

    def embeds_like(self, embedder: Embedder) -> bool:
        """True when this model's vectors are ``embedder``'s: the same provider, model and
        dimension (what engram records as an index's identity)."""
        mine = self._embedder
        return (mine.name, mine.model, mine.dimension) == (
            embedder.name,
            embedder.model,
            embedder.dimension,
        )

    def _get_query_embedding(self, query: str) -> list[float]:
        return self._embedder.embed([query], input_type="query")[0]

    async def _aget_query_embedding(self, query: str) -> list[float]:
        return self._get_query_embedding(query)

    def _get_text_embedding(self, text: str) -> list[float]:
        return self._embedder.embed([text], input_type="document")[0]

    def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
        return self._embedder.embed(texts, input_type="document")
