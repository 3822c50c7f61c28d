"""How an open memory is searched, whoever asks: every face ranks through ``MemorySearch``
(by way of ``engram.memories.entry``), so history, recency and one-hit-per-document mean the same
everywhere.

On top of the configured searcher it adds: memory history (superseded or archived) left out
unless asked for, a larger pool when recency re-ranks (a newer hit below the cut can rise into
it), the pool widened when a few long documents fill it with their chunks, and a memory ranked
below an older one it conflicts with moved up before it. Counting accesses is the caller's.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from engram.config import SearchConfig
from engram.errors import ConfigError
from engram.filters import And, Filter, Ne, matches
from engram.memories.judge.conflicts import newest_first
from engram.models import SearchMode, SearchResult
from engram.protocols import Embedder, Searcher, Store
from engram.search.fusion import apply_recency, best_per_document
from engram.text.redact import strip_private
from engram.text.unicode import require_unicode

# What is not memory history (superseded or archived): the one live filter of every search.
LIVE = Ne(field="live", value=False)
# The most chunks one search asks for (recency re-ranking, per-document widening).
MAX_POOL = 1000


def pools(first: int) -> Iterator[int]:
    """Pool sizes to try in turn: ``first``, then four times larger each time, up to
    ``MAX_POOL``; the caller stops as soon as it has enough."""
    pool = min(MAX_POOL, first)
    while True:
        yield pool
        if pool >= MAX_POOL:
            return
        pool = min(MAX_POOL, pool * 4)


class MemorySearch:
    """The searcher of one open memory, with the memory's search policy around it."""

    def __init__(
        self,
        options: SearchConfig,
        store: Store,
        embedder: Embedder,
        searcher: Searcher,
        check_identity: Callable[[], None],
    ) -> None:
        self.options = options
        self.store = store
        self.embedder = embedder
        self.searcher = searcher
        self._check_identity = check_identity

    def __call__(
        self,
        query: str,
        *,
        mode: SearchMode | None = None,
        limit: int | None = None,
        filter: Filter | None = None,
        include_superseded: bool = False,
        recency_weight: float | None = None,
        per_document: bool | None = None,
    ) -> SearchResult:
        """Rank chunks for ``query``; ``None`` options take the ``[search]`` defaults."""
        self._check_identity()
        opts = self.options
        wanted = limit or opts.limit
        weight = opts.recency_weight if recency_weight is None else recency_weight
        if not 0 <= weight <= 1:
            raise ConfigError(f"recency weight must be between 0 and 1, got {weight}")
        by_document = opts.per_document if per_document is None else per_document
        first = wanted * opts.candidate_multiplier if weight > 0 else wanted
        require_unicode(query, "the query")
        clean = strip_private(query)
        for pool in pools(first):
            result = self._live(clean, mode or opts.mode, pool, filter, include_superseded)
            hits = result.hits
            if weight > 0:
                hits = apply_recency(hits, weight, opts.recency_decay, time.time())
            if not by_document:
                break
            hits = best_per_document(hits)
            # Too few documents while the searcher had more to give: widen the pool.
            if len(hits) >= wanted or len(result.hits) < pool:
                break
        return result.model_copy(update={"hits": newest_first(hits[:wanted])})

    def _live(
        self,
        query: str,
        mode: SearchMode,
        limit: int,
        filter: Filter | None,
        include_superseded: bool,
    ) -> SearchResult:
        """Search, leaving out memory history unless asked for. Without a filter of the
        caller's, the search runs unfiltered first (a metadata filter costs some stores a scan
        on every query, and history is rare among hits); only when history shows up among the
        hits is it run again with the filter, so the answer is the filtered search's."""

        def run(flt: Filter | None) -> SearchResult:
            return self.searcher.search(
                query, self.store, self.embedder, mode=mode, limit=limit, filter=flt
            )

        if include_superseded:
            return run(filter)
        can_filter = "filter" in self.store.capabilities
        if filter is not None and can_filter:
            return run(And(filters=[filter, LIVE]))
        result = run(filter)
        live = [h for h in result.hits if matches(LIVE, h.chunk.metadata)]
        if len(live) == len(result.hits):
            return result
        if can_filter:
            return run(LIVE)
        return result.model_copy(update={"hits": live})
