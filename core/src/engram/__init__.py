"""engram: durable, searchable memory for AI agents.

Markdown files are the source of truth; stores and embedders are plugins chosen by name.
"""

from engram.errors import EngramError
from engram.filters import And, Contains, Eq, Filter, In, Ne, Not, Or, Range, where
from engram.models import Chunk, Document, Hit, IndexIdentity, SearchResult

__version__ = "0.1.0"

__all__ = [
    "And",
    "Chunk",
    "Contains",
    "Document",
    "EngramError",
    "Eq",
    "Filter",
    "Hit",
    "In",
    "IndexIdentity",
    "Ne",
    "Not",
    "Or",
    "Range",
    "SearchResult",
    "__version__",
    "where",
]
