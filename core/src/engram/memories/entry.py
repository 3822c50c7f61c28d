"""The one search entry: every face (``engram search``, the agent tools, the dashboard, recall,
collections, and through ``Memory.search`` the LangChain and LlamaIndex retrievers) ranks here,
so the same query gets the same hits in the same order wherever it is asked.

Around the memory's search policy (``MemorySearch``: history left out, recency, one hit per
document) it adds type-aware search: a query that names one memory type ("what are my
preferences"), or a type the caller gives, gets that type's live memories first
(``engram.memories.query_types``), narrowed by the caller's filter too. The result is the policy's
``SearchResult`` with those hits in front, cut to the limit: what every face renders.
"""

from __future__ import annotations

from engram.filters import And, Eq, Filter
from engram.memories.policy import MemorySearch
from engram.memories.query_types import asked_type, typed_hits, with_typed
from engram.memories.subjects import subject_filter
from engram.models import SearchMode, SearchResult
from engram.search.fusion import passes_min_score
from engram.text.redact import strip_private


def search(
    policy: MemorySearch,
    query: str,
    *,
    mode: SearchMode | None = None,
    limit: int | None = None,
    filter: Filter | None = None,
    memory_type: str | None = None,
    subject: str | None = None,
    include_superseded: bool = False,
    recency_weight: float | None = None,
    per_document: bool | None = None,
    typed: bool = True,
    hit_floor: float | None = None,
) -> SearchResult:
    """Rank chunks for ``query`` through ``policy`` (``None`` options take the ``[search]``
    defaults). ``memory_type`` keeps only memories of that type; with ``typed`` (off for a
    collection, whose caller's metadata is its own and has no memory types) the type the
    query names, or ``memory_type``, puts that type's live memories first. ``subject`` keeps
    only memories about it, whatever its case (``engram.memories.subjects``), typed hits too.
    ``hit_floor`` keeps, of the search's own hits, only those that clear it themselves (fused
    score or cosine) or that the keyword side matched (``passes_min_score``): recall's rule for
    what a session is given unasked; the typed hits stay, as every face shows them."""
    if subject is not None:
        about = subject_filter(subject)
        filter = about if filter is None else And(filters=[about, filter])
    narrowed = filter
    if memory_type is not None:
        only = Eq(field="type", value=memory_type)
        narrowed = only if filter is None else And(filters=[only, filter])
    result = policy(
        query,
        mode=mode,
        limit=limit,
        filter=narrowed,
        include_superseded=include_superseded,
        recency_weight=recency_weight,
        per_document=per_document,
    )
    if hit_floor is not None:
        kept = [h for h in result.hits if passes_min_score(h, hit_floor)]
        result = result.model_copy(update={"hits": kept})
    if not typed:
        return result
    clean = strip_private(query)
    wanted = memory_type or asked_type(clean)
    if wanted is None:
        return result
    size = limit or policy.options.limit
    found = typed_hits(policy.store, policy.embedder, wanted, clean, size, filter)
    return with_typed(result, found, size)
