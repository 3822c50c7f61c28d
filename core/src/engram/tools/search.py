"""The ``memory_search`` agent tool: hybrid search with type, subject, scope, tag, date and
source filters, typed hits first when a type is asked for (``Memory.search``, the one search entry;
kept apart from ``engram.tools`` so that module stays small; ``tools.TOOLS`` lists it). Every
filter is a typed ``engram.filters`` object: no user text is ever spliced into a query."""

from __future__ import annotations

from datetime import UTC, date, datetime, time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from engram.filters import And, Contains, Eq, Filter, Or, Range
from engram.ingest.sessions.sync import SOURCE as SESSIONS_SOURCE
from engram.ingest.sources import source_filter
from engram.memories.judge.conflicts import created_at_of, note, older_conflicts
from engram.memories.scopes import Scope
from engram.memory import Memory
from engram.models import MemoryType

SNIPPET_CHARS = 1500


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MemorySearchInput(_Input):
    """Search this user's memories, notes and past sessions by meaning and keywords, before
    answering about earlier work, preferences or decisions. Filter by type, subject, scope, tag,
    date range or source; read more of a hit with memory_get."""

    query: str = Field(min_length=1, max_length=2000, description="What to look for, in words.")
    limit: int = Field(default=6, ge=1, le=50, description="How many results at most.")
    source: Literal["all", "memory", "vault", "sessions"] = Field(
        default="all",
        description="memory: markdown notes and stored memories; vault: the notes alone; "
        "sessions: past agent conversations; all: every source.",
    )
    type: MemoryType | None = Field(
        default=None,
        description="Only memories of this type, e.g. preference for 'what are my "
        "preferences?', decision for 'what did we decide?'. A query that names one type gets "
        "that type's memories first even without it.",
    )
    subject: str | None = Field(
        default=None,
        min_length=1,
        max_length=200,
        description="Only memories about this subject: a person, 'user', 'project', a service "
        "(any case; 'Darrieux' finds 'Danielle Darrieux').",
    )
    scope: Scope | None = Field(default=None, description="Only memories of this scope.")
    tag: str | None = Field(default=None, max_length=64, description="Only memories with this tag.")
    since: date | None = Field(
        default=None, description="Only memories (or session turns) from this day on (YYYY-MM-DD)."
    )
    until: date | None = Field(
        default=None, description="Only memories (or session turns) up to this day (YYYY-MM-DD)."
    )
    include_superseded: bool = Field(
        default=False,
        description="Also return memories that newer ones superseded (history), marked so.",
    )
    per_document: bool = Field(
        default=False,
        description="One result per file (its best passage), so limit counts files.",
    )


class SearchHit(BaseModel):
    # The chunk's id: the same hit under the same id in every face (CLI --json, dashboard).
    id: str = ""
    path: str
    start_line: int | None = None
    end_line: int | None = None
    score: float
    source: str
    snippet: str
    title: str | None = None
    type: str | None = None
    # Who or what the memory is about, as its frontmatter writes it.
    subject: str | None = None
    role: str | None = None
    session_id: str | None = None
    timestamp: str | None = None
    superseded: bool = False
    # Older live memories this one may contradict (it is the newer: shown first).
    conflicts_with: list[str] = Field(default_factory=list)


class SearchOutput(BaseModel):
    query: str
    mode: str
    degraded: bool = False
    warnings: list[str] = Field(default_factory=list)
    results: list[SearchHit] = Field(default_factory=list)


def search(memory: Memory, args: MemorySearchInput) -> SearchOutput:
    parts: list[Filter] = []
    if args.source != "all":
        parts.append(source_filter(args.source))
    narrow = _narrowing(args)
    if narrow is not None:
        parts.append(narrow)
    flt: Filter | None = None if not parts else parts[0] if len(parts) == 1 else And(filters=parts)
    result = memory.search(
        args.query,
        limit=args.limit,
        filter=flt,
        include_superseded=args.include_superseded,
        per_document=args.per_document,
        type=args.type,
        subject=args.subject,
    )
    hits = []
    created = created_at_of(h.chunk.metadata for h in result.hits)
    for hit in result.hits:
        meta = hit.chunk.metadata
        text = hit.chunk.text.strip()
        hits.append(
            SearchHit(
                id=hit.chunk.id,
                path=hit.chunk.document_id,
                start_line=_int(meta.get("start_line")),
                end_line=_int(meta.get("end_line")),
                score=round(hit.score, 4),
                source=str(meta.get("source", "memory")),
                snippet=text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…",
                title=_str(meta.get("title")),
                type=_str(meta.get("type")),
                subject=_str(meta.get("subject")),
                role=_str(meta.get("role")),
                session_id=_str(meta.get("session_id")),
                timestamp=_str(meta.get("timestamp")),
                superseded=meta.get("live") is False,
                conflicts_with=older_conflicts(meta, created),
            )
        )
    return SearchOutput(
        query=result.query,
        mode=result.mode,
        degraded=result.degraded,
        warnings=result.warnings,
        results=hits,
    )


def _narrowing(args: MemorySearchInput) -> Filter | None:
    """Scope, tag and date filters: typed, never text spliced into a query. A date range
    matches a memory's ``created_at`` or a session turn's ``timestamp``."""
    parts: list[Filter] = []
    if args.scope:
        parts.append(Eq(field="scope", value=args.scope))
    if args.tag:
        parts.append(Contains(field="tags", value=args.tag))
    if args.since or args.until:
        low = args.since
        high = datetime.combine(args.until, time.max, UTC) if args.until else None
        parts.append(
            Or(
                filters=[
                    Range(field=name, gte=low, lte=high) for name in ("created_at", "timestamp")
                ]
            )
        )
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(filters=parts)


def render_search(out: SearchOutput) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    if not out.results:
        return f"No results for {out.query!r}.{notes}"
    blocks = [f"Found {len(out.results)} results for {out.query!r}:{notes}"]
    for rank, hit in enumerate(out.results, 1):
        where = hit.path
        if hit.start_line is not None:
            unit = "turn" if hit.source == SESSIONS_SOURCE else "lines"
            where += f" ({unit} {hit.start_line}-{hit.end_line})"
        who = f", {hit.role}" if hit.role else ""
        old = " (superseded: history)" if hit.superseded else ""
        old += note(hit.conflicts_with)
        blocks.append(
            f"[{rank}] {where} score {hit.score:.3f}, {hit.source}{who}{old}\n{hit.snippet}"
        )
    return "\n\n".join(blocks)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None
