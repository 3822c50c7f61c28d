"""engram: durable, searchable memory for AI agents.

Markdown files are the source of truth; stores and embedders are plugins chosen by name.
The names below load on first use, so ``import engram`` (and ``engram --version``, and every
host hook that starts the CLI) pays for pydantic and numpy only when it needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engram.errors import EngramError
    from engram.filters import And, Contains, Eq, Filter, In, Ne, Not, Or, Range, where
    from engram.models import Chunk, Document, Hit, IndexIdentity, SearchResult

__version__ = "0.1.0"

# Public name → the module that defines it.
_LAZY = {
    "EngramError": "engram.errors",
    **{
        name: "engram.filters"
        for name in ("And", "Contains", "Eq", "Filter", "In", "Ne", "Not", "Or", "Range", "where")
    },
    **{
        name: "engram.models"
        for name in ("Chunk", "Document", "Hit", "IndexIdentity", "SearchResult")
    },
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'engram' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


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
