"""Type-aware retrieval: "what are my preferences" asks for a kind of memory, not for words
that the memories contain; similarity to such a question is low and falls under the search's
``min_score``, so plain search finds none. A query that names one memory type (or a type the
caller gives) also gets that type's live memories, nearest first, ahead of the other hits
(``engram.memories.entry`` does that for every face)."""

from __future__ import annotations

import re

from engram.errors import EngramError
from engram.filters import And, Eq, Filter, matches
from engram.memories.policy import LIVE
from engram.models import Hit, SearchResult
from engram.protocols import Embedder, Store
from engram.types import TYPE_WORDS  # words naming a type: few, unambiguous

_WORD = re.compile(r"[a-z]+")

# More words that name a type in a question, so that every type can be listed: "list all my
# error solutions", "show all config", "what did we decide", "what progress", "my facts".
ASKING_WORDS: dict[str, str] = {
    **TYPE_WORDS,
    "solution": "error-solution",
    "solutions": "error-solution",
    "fixes": "error-solution",
    "config": "project-config",
    "configs": "project-config",
    "configuration": "project-config",
    "settings": "project-config",
    "decide": "decision",
    "decided": "decision",
    "progress": "progress",
    "facts": "fact",
    "notes": "note",
    "summaries": "session-summary",
    "architecture": "architecture",
    "brief": "project-brief",
}


def asked_type(query: str) -> str | None:
    """The memory type a query names, when it names exactly one."""
    found = {ASKING_WORDS[w] for w in _WORD.findall(query.casefold()) if w in ASKING_WORDS}
    return found.pop() if len(found) == 1 else None


def typed_hits(
    store: Store,
    embedder: Embedder,
    memory_type: str,
    query: str,
    limit: int,
    extra: Filter | None = None,
) -> list[Hit]:
    """Live memories of ``memory_type`` (and ``extra``), nearest to ``query`` first, one hit
    per memory, without the search's ``min_score``; none when the embedder is unavailable."""
    parts: list[Filter] = [Eq(field="type", value=memory_type), LIVE]
    if extra is not None:
        parts.append(extra)
    flt = And(filters=parts)
    can_filter = "filter" in getattr(store, "capabilities", ())
    try:
        vector = embedder.embed([query], "query")[0]
        pool = store.vector_search(vector, limit * 4, flt if can_filter else None)
    except EngramError:
        return []
    seen: set[str] = set()
    hits: list[Hit] = []
    for hit in pool:
        if matches(flt, hit.chunk.metadata) and hit.chunk.document_id not in seen:
            seen.add(hit.chunk.document_id)
            hits.append(hit)
    return hits[:limit]


def with_typed(result: SearchResult, typed: list[Hit], limit: int) -> SearchResult:
    """``typed`` hits first, then the search's own hits not already among them."""
    if not typed:
        return result
    chosen = {h.chunk.id for h in typed}
    hits = [*typed, *(h for h in result.hits if h.chunk.id not in chosen)]
    return result.model_copy(update={"hits": hits[:limit]})
