"""engram for LangChain: a ``VectorStore`` and a hybrid-search ``BaseRetriever`` over an engram
collection (markdown files, any engram store), and engram's embedder as ``Embeddings``."""

from engram_langchain.filters import to_filter
from engram_langchain.retriever import EngramRetriever
from engram_langchain.vectorstore import EngramEmbeddings, EngramVectorStore

__all__ = ["EngramEmbeddings", "EngramRetriever", "EngramVectorStore", "to_filter"]
