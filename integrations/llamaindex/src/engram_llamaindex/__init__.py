"""engram for LlamaIndex: ``EngramVectorStore`` keeps nodes in an engram collection (markdown
files, indexed by the memory's store), ``EngramEmbedding`` lends engram's embedder to LlamaIndex,
and ``EngramMemoryRetriever`` is engram's own search over the whole memory, as ``engram search``
ranks."""

from engram_llamaindex.embedding import EngramEmbedding
from engram_llamaindex.filters import UnsupportedFilter, to_engram_filter
from engram_llamaindex.memory_retriever import EngramMemoryRetriever
from engram_llamaindex.query import UnsupportedQueryMode
from engram_llamaindex.vector_store import DEFAULT_COLLECTION, EngramVectorStore

__all__ = [
    "DEFAULT_COLLECTION",
    "EngramEmbedding",
    "EngramMemoryRetriever",
    "EngramVectorStore",
    "UnsupportedFilter",
    "UnsupportedQueryMode",
    "to_engram_filter",
]
