"""The default searcher: runs a query against a store in keyword, vector or hybrid mode, and
degrades to keyword results (with a warning) when the embedder is missing or fails."""

from __future__ import annotations

import numpy as np

from engram.config import SearchConfig
from engram.errors import (
    CapabilityError,
    ConfigError,
    EmbedderError,
    EmptyQuery,
    EngramError,
)
from engram.filters import Filter
from engram.models import Hit, IndexIdentity, SearchMode, SearchResult
from engram.protocols import CandidateSearch, Embedder, Store
from engram.search.candidates import both_halves, candidate_search, keyword_ceiling
from engram.search.fusion import normalize_keyword, rrf, single, weighted
from engram.search.ranked import Fused
from engram.stores.checks import check_identity
from engram.text.stopwords import keyword_query
from engram.text.words import tokenize

SearcherOptions = SearchConfig
"""The default searcher's options are the ``[search]`` section of the configuration."""


class HybridSearcher:
    """The default searcher: vector, keyword, or both fused (weighted or RRF).

    Each side fetches ``limit * candidate_multiplier`` candidates. ``min_score`` is the bar the
    best hit must clear for a search to show its ranking (``Fused.shown``): its cosine in vector
    mode, its fused score or cosine in weighted hybrid mode, where keyword matches are shown
    even below it; never applied to keyword-only results (BM25 magnitudes depend on corpus
    size) nor to RRF scores (another scale). In
    hybrid mode a missing or failing embedder degrades to keyword results (``degraded=True`` plus
    a warning); a store without keyword search gives vector results with a warning.
    ``SearchResult.mode`` is the mode actually used.

    Both sides hand back candidates (ids, scores, store keys; ``engram.candidates``), fusion
    ranks those arrays, and chunks are built for the returned hits only, without their vectors
    when the store can leave them out.
    """

    name = "default"

    def __init__(self, options: SearchConfig | None = None) -> None:
        self.options = options if options is not None else SearchConfig()

    def search(
        self,
        query: str,
        store: Store,
        embedder: Embedder | None,
        *,
        mode: SearchMode | None = None,
        limit: int | None = None,
        filter: Filter | None = None,
    ) -> SearchResult:
        """Rank ``store``'s chunks for ``query``; ``mode`` / ``limit`` default to the options."""
        mode = mode or self.options.mode
        limit = self.options.limit if limit is None else limit
        if limit < 1:
            raise ConfigError(f"search limit must be at least 1, got {limit}")
        if not tokenize(query):
            raise EmptyQuery(
                f"the query {query!r} has no words to search for (only punctuation or spaces); "
                f"search for at least one word"
            )
        caps = store.capabilities
        if filter is not None and "filter" not in caps:
            raise CapabilityError(
                f"{type(store).__name__} cannot filter by metadata; search without a filter or "
                f"use a store that supports filters (memory, sqlite)"
            )
        pool = limit * self.options.candidate_multiplier
        if mode == "keyword":
            return self._keyword(query, store, pool, limit, filter)
        if mode == "vector":
            return self._vector(query, store, embedder, pool, limit, filter)
        if mode != "hybrid":
            raise ConfigError(f"search mode must be hybrid, vector or keyword, got {mode!r}")
        return self._hybrid(query, store, embedder, pool, limit, filter)

    def _keyword(
        self,
        query: str,
        store: Store,
        pool: int,
        limit: int,
        filter: Filter | None,
        *,
        degraded: bool = False,
        warnings: list[str] | None = None,
    ) -> SearchResult:
        if "keyword" not in store.capabilities:
            raise CapabilityError(
                f"{type(store).__name__} has no keyword search; use mode='vector' or a store "
                f"with keyword search (memory, sqlite)"
            )
        source = candidate_search(store)
        found = source.keyword_candidates(keyword_query(query), pool, filter)
        scores = np.asarray([normalize_keyword(s) for s in found.scores.tolist()], dtype=float)
        # No min_score here: BM25 magnitudes depend on corpus size (one matching note in a tiny
        # vault scores near zero), so a fixed threshold would hide real matches.
        return SearchResult(
            query=query,
            mode="keyword",
            hits=_build(source, single(found, scores, vector=False).head(limit)),
            degraded=degraded,
            warnings=warnings or [],
        )

    def _vector(
        self,
        query: str,
        store: Store,
        embedder: Embedder | None,
        pool: int,
        limit: int,
        filter: Filter | None,
        *,
        warnings: list[str] | None = None,
    ) -> SearchResult:
        if "vector" not in store.capabilities:
            raise CapabilityError(
                f"{type(store).__name__} has no vector search; use mode='keyword' or a store "
                f"with vector search"
            )
        if embedder is None:
            raise EmbedderError(
                "vector search needs an embedder and none is configured; set [embedder] "
                "provider in engram.toml, or search with mode='keyword'"
            )
        _check_identity(store, embedder)
        try:
            vector = _embed_query(query, embedder)
        except EngramError:
            raise
        except Exception as exc:
            raise EmbedderError(
                f"embedder {_describe(embedder)} failed: {type(exc).__name__}: {exc}; check the "
                f"embedder (network, API key), or search with mode='keyword'"
            ) from exc
        source = candidate_search(store)
        found = source.vector_candidates(vector, pool, filter)
        return SearchResult(
            query=query,
            mode="vector",
            hits=_build(source, self._cut(single(found, found.scores, vector=True), limit)),
            warnings=warnings or [],
        )

    def _hybrid(
        self,
        query: str,
        store: Store,
        embedder: Embedder | None,
        pool: int,
        limit: int,
        filter: Filter | None,
    ) -> SearchResult:
        caps = store.capabilities
        if "vector" not in caps and "keyword" not in caps:
            raise CapabilityError(
                f"{type(store).__name__} declares neither vector nor keyword search; "
                f"it cannot be searched"
            )
        store_name = type(store).__name__
        if "keyword" not in caps:
            note = f"{store_name} has no keyword search; showing vector results only"
            return self._vector(query, store, embedder, pool, limit, filter, warnings=[note])
        if "vector" not in caps:
            note = f"{store_name} has no vector search; showing keyword results only"
            return self._keyword(query, store, pool, limit, filter, warnings=[note])
        if embedder is None:
            note = (
                "no embedder is configured; showing keyword results only "
                "(set [embedder] provider in engram.toml for hybrid search)"
            )
            return self._keyword(query, store, pool, limit, filter, degraded=True, warnings=[note])
        _check_identity(store, embedder)
        try:
            vector = _embed_query(query, embedder)
        except Exception as exc:
            note = (
                f"embedder {_describe(embedder)} failed ({type(exc).__name__}: {exc}); showing "
                f"keyword results only. Check the embedder (network, API key) and search again"
            )
            return self._keyword(query, store, pool, limit, filter, degraded=True, warnings=[note])
        source = candidate_search(store)
        words = keyword_query(query)
        vector_side, keyword_side = both_halves(source, vector, words, pool, filter)
        opts = self.options
        if opts.fusion == "rrf":
            fused = rrf(vector_side, keyword_side, k=opts.rrf_k)
            return SearchResult(query=query, mode="hybrid", hits=_build(source, fused.head(limit)))
        wants_ceiling = opts.keyword_scale == "ceiling" and len(keyword_side) > 0
        fused = weighted(
            vector_side,
            keyword_side,
            opts.vector_weight,
            opts.keyword_weight,
            opts.keyword_scale,
            standout_floor=opts.keyword_standout_floor,
            cosines=lambda keys: source.key_scores(keys, vector),
            balance=opts.balance,
            ceiling=keyword_ceiling(store, words) if wants_ceiling else None,
        )
        # min_score decides whether the search found anything (``Fused.shown``): when its best
        # hit's fused score or cosine clears it, the ranking is shown; else only keyword
        # matches (keyword mode shows every match: BM25 has no fixed scale to cut on). So hybrid
        # never hides what a single mode shows.
        kept = fused.shown(limit, opts.min_score, keyword=True)
        return SearchResult(query=query, mode="hybrid", hits=_build(source, kept))

    def _cut(self, fused: Fused, limit: int) -> Fused:
        return fused.shown(limit, self.options.min_score)


def _build(source: CandidateSearch, fused: Fused) -> list[Hit]:
    """The returned hits' chunks, built now and only for them."""
    return fused.hits(source.chunks_for(fused.keys)) if len(fused) else []


def _describe(embedder: Embedder) -> str:
    return f"{embedder.name}/{embedder.model}"


def _check_identity(store: Store, embedder: Embedder) -> None:
    """A query embedded by another model than the stored vectors would rank noise: refuse
    (``stores.checks.check_identity``, the same check and words as every store and write)."""
    identity = store.get_identity()
    if identity is None:
        return
    # Built unvalidated: a broken embedder's odd dimension is reported, not a pydantic error.
    asked = IndexIdentity.model_construct(
        embedder=embedder.name,
        model=embedder.model,
        dimension=embedder.dimension,
        chunker=identity.chunker,
    )
    check_identity(identity, asked, vectors_only=True)


def _embed_query(query: str, embedder: Embedder) -> list[float]:
    vectors = embedder.embed([query], input_type="query")
    if len(vectors) != 1:
        raise EmbedderError(
            f"embedder {_describe(embedder)} returned {len(vectors)} vectors for one query; "
            f"the embedder is broken: fix or replace it"
        )
    try:
        values = np.asarray(vectors[0], dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise EmbedderError(
            f"embedder {_describe(embedder)} returned a query vector that is not numbers ({exc}); "
            f"the embedder is broken: fix or replace it"
        ) from None
    vector: list[float] = values.reshape(-1).tolist()
    if values.ndim != 1 or len(vector) != embedder.dimension:
        raise EmbedderError(
            f"embedder {_describe(embedder)} returned a {len(vector)}-dim vector but declares "
            f"{embedder.dimension} dims; set its dimension option to what the model returns"
        )
    if not np.isfinite(values).all():
        raise EmbedderError(
            f"embedder {_describe(embedder)} returned NaN or infinite values for the query; "
            f"retry, or report it to the provider"
        )
    return vector
