"""Registers the built-in ``default`` searcher (``engram.search.HybridSearcher``)."""

from __future__ import annotations

from engram.hookspecs import hookimpl
from engram.registry import Register
from engram.search import HybridSearcher, SearcherOptions


@hookimpl
def register_searchers(register: Register) -> None:
    """The ``default`` searcher; its options are the ``[search]`` configuration section."""
    register("default", HybridSearcher, options=SearcherOptions)
