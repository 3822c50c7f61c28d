"""Ranking: the word tokenizer (``words``), score fusion (``fusion``) and the default hybrid
searcher (``searcher``). The names below are the public ones; import them from here."""

from engram.search.fusion import (
    apply_recency,
    balance_weights,
    best_per_document,
    fuse_rrf,
    fuse_weighted,
    keyword_standout,
    normalize_keyword,
    passes_min_score,
)
from engram.search.searcher import HybridSearcher, SearcherOptions
from engram.text.words import tokenize

__all__ = [
    "HybridSearcher",
    "SearcherOptions",
    "apply_recency",
    "balance_weights",
    "best_per_document",
    "fuse_rrf",
    "fuse_weighted",
    "keyword_standout",
    "normalize_keyword",
    "passes_min_score",
    "tokenize",
]
