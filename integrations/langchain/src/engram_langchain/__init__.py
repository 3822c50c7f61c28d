"""engram for LangChain: a ``VectorStore`` and a hybrid-search ``BaseRetriever`` over an engram
collection (markdown files, any engram store), engram's embedder as ``Embeddings``, and
``EngramMemoryRetriever``: engram's own search over the whole memory, as ``engram search`` ranks."""

from engram_langchain.filters import to_filter
from engram_langchain.memory_retriever import EngramMemoryRetriever
from engram_langchain.retriever import EngramRetriever
from engram_langchain.vectorstore import EngramEmbeddings, EngramVectorStore

__all__ = [
    "EngramEmbeddings",
    "EngramMemoryRetriever",
    "EngramRetriever",
    "EngramVectorStore",
    "to_filter",
]
