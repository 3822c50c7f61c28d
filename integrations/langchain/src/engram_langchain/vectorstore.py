"""An engram collection as a LangChain ``VectorStore``.

Documents become markdown files of an engram collection (``collections/<name>/`` of the
project), indexed by whichever engram store the memory uses; ``engram rebuild`` restores them
and ``engram search`` finds them. engram embeds with its own configured embedder, so the
``embeddings`` of this store are engram's (``EngramEmbeddings``). Async methods are LangChain's
defaults, which run these in the default executor.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore
from langchain_core.vectorstores.utils import maximal_marginal_relevance

from engram import (
    ClosingStore,
    Collection,
    CollectionDocument,
    CollectionHit,
    EngramConfig,
    Filter,
    Memory,
    SearchMode,
    load_config,
)
from engram_langchain.filters import FilterLike, to_filter

DEFAULT_COLLECTION = "langchain"


class EngramEmbeddings(Embeddings):
    """engram's configured embedder (behind its embedding cache, which removes ``<private>``
    spans before a text is looked up or sent) as LangChain ``Embeddings``."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.memory.embedder.embed(texts, "document")

    def embed_query(self, text: str) -> list[float]:
        return self.memory.embedder.embed([text], "query")[0]


class EngramVectorStore(ClosingStore, VectorStore):
    """LangChain documents in an engram collection. ``EngramVectorStore(memory)`` works on a
    memory you opened (closing it stays yours); ``open()`` opens one that ``close()`` closes."""

    def __init__(
        self,
        memory: Memory,
        collection_name: str = DEFAULT_COLLECTION,
        *,
        owns_memory: bool = False,
    ) -> None:
        self.memory = memory
        self.collection: Collection = memory.collection(collection_name)
        self._embeddings = EngramEmbeddings(memory)
        self._owns_memory = owns_memory

    @classmethod
    def open(
        cls,
        collection_name: str = DEFAULT_COLLECTION,
        *,
        overrides: dict[str, Any] | None = None,
        project_dir: Path | str | None = None,
    ) -> EngramVectorStore:
        """The memory of the project at ``project_dir`` (default: the current folder: its
        engram.toml, the user config, ENGRAM_* variables, then ``overrides``)."""
        start = Path(project_dir).resolve() if project_dir is not None else None
        return cls.from_config(load_config(overrides, start=start), collection_name)

    @classmethod
    def from_config(
        cls, config: EngramConfig, collection_name: str = DEFAULT_COLLECTION
    ) -> EngramVectorStore:
        """A store on a memory opened from ``config`` (``engram.config.load_config``), which
        ``close()`` closes."""
        return cls(Memory.open(config), collection_name, owns_memory=True)

    def close(self) -> None:
        """Close the memory if this store opened it."""
        if self._owns_memory:
            self.memory.close()

    @property
    def embeddings(self) -> Embeddings:
        return self._embeddings

    # -- writing -------------------------------------------------------------------------------
    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Store ``documents`` (an id already stored is overwritten); ids come from ``ids=``,
        else the document's own ``id``, else a new uuid4. The documents are not changed."""
        given: Sequence[str | None] | None = kwargs.get("ids")
        if given is not None and len(given) != len(documents):
            raise ValueError(f"got {len(given)} ids for {len(documents)} documents")
        ids = [
            (given[i] if given is not None else None) or doc.id or str(uuid.uuid4())
            for i, doc in enumerate(documents)
        ]
        return self.collection.add(
            [
                CollectionDocument(id=i, text=doc.page_content, metadata=dict(doc.metadata))
                for i, doc in zip(ids, documents, strict=True)
            ]
        )

    def add_texts(
        self,
        texts: Iterable[str],
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        metas = metadatas if metadatas is not None else [{} for _ in texts]
        if len(metas) != len(texts):
            raise ValueError(f"got {len(metas)} metadatas for {len(texts)} texts")
        docs = [Document(page_content=t, metadata=m) for t, m in zip(texts, metas, strict=True)]
        return self.add_documents(docs, ids=ids)

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool | None:
        """Delete these documents (unknown ids are not an error); ``None`` with no filter
        deletes them all. ``where=`` (or ``filter=``) takes a metadata filter, as
        langchain-chroma does: only the matching documents go (among ``ids`` when given too).
        Any other keyword is refused before anything is deleted."""
        flt = _delete_filter(kwargs)
        if flt is not None:
            matching = self.collection.matching(flt)
            wanted = set(ids) if ids is not None else None
            self.collection.delete([i for i in matching if wanted is None or i in wanted])
        elif ids is None:
            self.collection.clear()
        else:
            self.collection.delete(ids)
        return True

    # -- reading -------------------------------------------------------------------------------
    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        return [_document(doc) for doc in self.collection.get(ids)]

    def similarity_search(
        self, query: str, k: int = 4, filter: FilterLike = None, **kwargs: Any
    ) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, filter, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: FilterLike = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        """The ``k`` nearest documents with their cosine similarity (higher is closer)."""
        return self.search_with_score(query, k=k, mode="vector", filter=filter)

    def search_with_score(
        self, query: str, *, k: int = 4, mode: SearchMode = "hybrid", filter: FilterLike = None
    ) -> list[tuple[Document, float]]:
        """engram's own search in any mode: ``hybrid`` (keyword + vector, ``[search]`` options
        such as ``min_score`` apply), ``vector`` or ``keyword``."""
        hits = self.collection.search(query, k=k, mode=mode, filter=to_filter(filter))
        return _scored(hits)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, filter: FilterLike = None, **kwargs: Any
    ) -> list[Document]:
        hits = self.collection.search_by_vector(embedding, k=k, filter=to_filter(filter))
        return [doc for doc, _ in _scored(hits)]

    def max_marginal_relevance_search(
        self,
        query: str,
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: FilterLike = None,
        **kwargs: Any,
    ) -> list[Document]:
        """``k`` documents near ``query`` and unlike each other, chosen among the ``fetch_k``
        nearest by their stored vectors (only the query is embedded)."""
        vector = self.collection.embed_query(query)
        return self.max_marginal_relevance_search_by_vector(
            vector, k, fetch_k, lambda_mult, filter=filter
        )

    def max_marginal_relevance_search_by_vector(
        self,
        embedding: list[float],
        k: int = 4,
        fetch_k: int = 20,
        lambda_mult: float = 0.5,
        filter: FilterLike = None,
        **kwargs: Any,
    ) -> list[Document]:
        found = self.collection.candidates_with_vectors(
            embedding, k=max(k, fetch_k), filter=to_filter(filter)
        )
        if not found:
            return []
        picked = maximal_marginal_relevance(
            np.asarray(embedding, dtype=float), [v for _, v in found], lambda_mult, k
        )
        return [_document(found[i][0].document) for i in picked]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        """Cosine similarity (-1..1) as a relevance in 0..1."""
        return _cosine_relevance

    @classmethod
    def from_texts(
        cls,
        texts: list[str],
        embedding: Embeddings,
        metadatas: list[dict[str, Any]] | None = None,
        *,
        ids: list[str] | None = None,
        **kwargs: Any,
    ) -> EngramVectorStore:
        """A store over the memory of ``embedding`` (an ``EngramEmbeddings``), holding
        ``texts``; ``collection_name`` picks the collection."""
        if not isinstance(embedding, EngramEmbeddings):
            raise ValueError(
                "engram embeds documents with its own configured embedder; pass "
                "EngramEmbeddings(memory), or set [embedder] in engram.toml and use "
                "EngramVectorStore.open()"
            )
        store = cls(embedding.memory, kwargs.get("collection_name", DEFAULT_COLLECTION))
        store.add_texts(texts, metadatas, ids=ids)
        return store


def _delete_filter(kwargs: dict[str, Any]) -> Filter | None:
    """The metadata filter a ``delete`` call names, or None; anything else is an error."""
    unknown = sorted(set(kwargs) - {"where", "filter"})
    if unknown:
        raise ValueError(
            f"delete() does not take {', '.join(unknown)}; it takes ids and a metadata filter "
            "as where= (or filter=). Nothing was deleted"
        )
    given = {k: v for k, v in kwargs.items() if v is not None}
    if len(given) > 1:
        raise ValueError("give where= or filter=, not both. Nothing was deleted")
    if not given:
        return None
    flt = to_filter(next(iter(given.values())))
    if flt is None:
        raise ValueError(
            "an empty filter would match every document; to delete them all call delete() "
            "with no arguments. Nothing was deleted"
        )
    return flt


def _document(doc: CollectionDocument) -> Document:
    return Document(id=doc.id, page_content=doc.text, metadata=dict(doc.metadata))


def _scored(hits: list[CollectionHit]) -> list[tuple[Document, float]]:
    return [(_document(hit.document), hit.score) for hit in hits]


def _cosine_relevance(score: float) -> float:
    return max(0.0, min(1.0, (score + 1.0) / 2.0))
