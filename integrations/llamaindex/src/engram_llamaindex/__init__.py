"""engram for LlamaIndex: ``EngramVectorStore`` keeps nodes in an engram collection (markdown
files, indexed by the memory's store), ``EngramEmbedding`` lends engram's embedder to LlamaIndex."""

from engram_llamaindex.embedding import EngramEmbedding
from engram_llamaindex.filters import UnsupportedFilter, to_engram_filter
from engram_llamaindex.query import UnsupportedQueryMode
from engram_llamaindex.vector_store import DEFAULT_COLLECTION, EngramVectorStore

__all__ = [
    "DEFAULT_COLLECTION",
    "EngramEmbedding",
    "EngramVectorStore",
    "UnsupportedFilter",
    "UnsupportedQueryMode",
    "to_engram_filter",
]
