"""The agent tools, defined once and served by every surface (MCP server, CLI, plugins).

Each tool has a pydantic input model (its JSON schema is generated from it, never written by
hand), a pydantic output model, a function over an open ``Memory`` and a short text rendering
for the model to read. ``Toolbox.call`` validates arguments, runs the tool under one lock and
turns every failure into a ``ToolResult`` with ``ok=False`` and a message that says what to do:
a bad call is a tool error, never a crash.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any, Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from engram.errors import EngramError
from engram.filters import And, Eq, Filter
from engram.ingest.sessions.sync import SOURCE as SESSIONS_SOURCE
from engram.keeper import Keeper
from engram.lifecycle.conflicts import conflict_note, created_at_of, note, older_conflicts
from engram.memory import Memory
from engram.models import Excerpt, MemoryInfo, MemoryType, StoredMemory
from engram.scopes import Scope
from engram.search.types import asked_type, typed_hits, with_typed
from engram.sources import source_filter
from engram.tool_get import MemoryGetInput, render_get
from engram.tool_get import get as get_excerpt
from engram.tool_restore import MemoryRestoreInput, render_restore
from engram.tool_restore import restore as restore_memory

log = logging.getLogger(__name__)

SNIPPET_CHARS = 1500
MAX_CONTENT = 100_000


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- inputs


class MemorySearchInput(_Input):
    """Search memories, notes and past sessions (hybrid keyword + meaning)."""

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
    scope: Scope | None = Field(default=None, description="Only memories of this scope.")
    include_superseded: bool = Field(
        default=False,
        description="Also return memories that newer ones superseded (history), marked so.",
    )
    per_document: bool = Field(
        default=False,
        description="One result per file (its best passage), so limit counts files.",
    )


class MemoryStoreInput(_Input):
    """Save something worth remembering as a markdown memory."""

    content: str = Field(
        min_length=1,
        max_length=MAX_CONTENT,
        description="The memory itself, in markdown. <private>…</private> spans are dropped.",
    )
    title: str | None = Field(default=None, max_length=200, description="A short title.")
    type: MemoryType = Field(default="note", description="What kind of memory this is.")
    scope: Scope = Field(
        default="project", description="user: true everywhere; project: about this project."
    )
    tags: list[str] = Field(default_factory=list, max_length=20, description="Free tags.")
    importance: float = Field(
        default=1.0, ge=0, le=10, description="0 to 10; pruning removes low values first."
    )
    path: str | None = Field(
        default=None,
        max_length=300,
        description="File name inside the memory folder (default: <type>/<title>.md). An "
        "existing file is never overwritten: a number is added instead. A near-duplicate of "
        "a stored memory updates that memory instead of writing a new file.",
    )


class MemoryForgetInput(_Input):
    """Delete a stored memory: its file and everything indexed from it."""

    id: str = Field(
        min_length=1,
        max_length=1000,
        description="The memory's id (from memory_store or memory_list) or its path.",
    )


class MemoryListInput(_Input):
    """List stored memories, newest first, optionally filtered."""

    type: MemoryType | None = None
    scope: Scope | None = None
    tag: str | None = Field(default=None, max_length=64)
    since: date | None = Field(default=None, description="Created on or after (YYYY-MM-DD).")
    until: date | None = Field(default=None, description="Created on or before (YYYY-MM-DD).")
    limit: int = Field(default=50, ge=1, le=500)
    include_superseded: bool = Field(default=False, description="Also list history.")


class MemoryStatsInput(_Input):
    """How much is stored: documents, chunks, memories by type, the index in use."""


# --------------------------------------------------------------------------- outputs


class SearchHit(BaseModel):
    path: str
    start_line: int | None = None
    end_line: int | None = None
    score: float
    source: str
    snippet: str
    title: str | None = None
    type: str | None = None
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


class ForgetOutput(BaseModel):
    removed: list[str]


class ListOutput(BaseModel):
    count: int
    memories: list[MemoryInfo]


class StatsOutput(BaseModel):
    """``engram.stats.collect``'s counts (the CLI and the dashboard show the same)."""

    store: str
    embedder: str
    documents: int
    documents_by_source: dict[str, int]
    chunks: int
    keyword_only: int = 0
    memories: int
    memories_by_type: dict[str, int]
    memories_by_scope: dict[str, int] = Field(default_factory=dict)
    memory_dir: str
    identity: dict[str, JsonValue] | None = None


# --------------------------------------------------------------------------- tools

In = TypeVar("In", bound=BaseModel)
Out = TypeVar("Out", bound=BaseModel)


@dataclass(frozen=True)
class Tool(Generic[In, Out]):
    """One agent tool: its schema comes from ``input``; ``run`` does the work."""

    name: str
    input: type[In]
    output: type[Out]
    run: Callable[[Memory, In], Out]
    render: Callable[[Out], str]
    read_only: bool = True
    destructive: bool = False

    @property
    def description(self) -> str:
        return (self.input.__doc__ or self.name).strip()

    def input_schema(self) -> dict[str, Any]:
        return self.input.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        return self.output.model_json_schema(mode="serialization")


def _search(memory: Memory, args: MemorySearchInput) -> SearchOutput:
    parts: list[Filter] = []
    if args.source != "all":
        parts.append(source_filter(args.source))
    if args.type:
        parts.append(Eq(field="type", value=args.type))
    if args.scope:
        parts.append(Eq(field="scope", value=args.scope))
    flt: Filter | None = None if not parts else parts[0] if len(parts) == 1 else And(filters=parts)
    result = memory.search(
        args.query,
        limit=args.limit,
        filter=flt,
        include_superseded=args.include_superseded,
        per_document=args.per_document,
    )
    wanted = args.type or asked_type(args.query)
    if wanted and args.source != "sessions":
        scope = Eq(field="scope", value=args.scope) if args.scope else None
        typed = typed_hits(memory.store, memory.embedder, wanted, args.query, args.limit, scope)
        result = with_typed(result, typed, args.limit)
    hits = []
    created = created_at_of(h.chunk.metadata for h in result.hits)
    for hit in result.hits:
        meta = hit.chunk.metadata
        text = hit.chunk.text.strip()
        hits.append(
            SearchHit(
                path=hit.chunk.document_id,
                start_line=_int(meta.get("start_line")),
                end_line=_int(meta.get("end_line")),
                score=round(hit.score, 4),
                source=str(meta.get("source", "memory")),
                snippet=text if len(text) <= SNIPPET_CHARS else text[: SNIPPET_CHARS - 1] + "…",
                title=_str(meta.get("title")),
                type=_str(meta.get("type")),
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


def _render_search(out: SearchOutput) -> str:
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


def _store(memory: Memory, args: MemoryStoreInput) -> StoredMemory:
    return memory.remember(
        args.content,
        title=args.title,
        type=args.type,
        scope=args.scope,
        tags=args.tags,
        path=args.path,
        importance=args.importance,
    )


_MERGED = "Updated the memory holding the same fact (its earlier wording kept as a revision):"


def _render_store(out: StoredMemory) -> str:
    notes = "".join(f"\nwarning: {w}" for w in out.warnings)
    verb = "Stored memory" if out.action == "created" else _MERGED
    stale = f" It supersedes {', '.join(out.superseded)}." if out.superseded else ""
    if out.linked_conflicts:
        stale += f" It may contradict {', '.join(out.linked_conflicts)} (both kept, linked)."
    return f"{verb} {out.id} at {out.path} ({out.chunks} chunks indexed).{stale}{notes}"


def _forget(memory: Memory, args: MemoryForgetInput) -> ForgetOutput:
    return ForgetOutput(removed=memory.forget(args.id))


def _render_forget(out: ForgetOutput) -> str:
    return "Forgot " + ", ".join(out.removed) + "."


def _list(memory: Memory, args: MemoryListInput) -> ListOutput:
    found = memory.list_memories(
        type=args.type,
        scope=args.scope,
        tag=args.tag,
        since=args.since.isoformat() if args.since else None,
        until=args.until.isoformat() + "T23:59:59+00:00" if args.until else None,
        limit=args.limit,
        include_superseded=args.include_superseded,
    )
    return ListOutput(count=len(found), memories=found)


def _render_list(out: ListOutput) -> str:
    if not out.memories:
        return "No memories match."
    lines = [f"{out.count} memories:"]
    created = {m.id: m.created_at for m in out.memories if m.id and m.created_at}
    for m in out.memories:
        kind = "/".join(x for x in (m.type, m.scope) if x) or "-"
        said = conflict_note(m.model_dump(include={"id", "created_at", "conflicts_with"}), created)
        lines.append(f"- {m.created_at or '?'} {m.id or '-'} [{kind}] {m.title} ({m.path}){said}")
    return "\n".join(lines)


def _stats(memory: Memory, args: MemoryStatsInput) -> StatsOutput:
    return StatsOutput.model_validate(memory.stats())


def _render_stats(out: StatsOutput) -> str:
    return json.dumps(out.model_dump(mode="json"), indent=2)


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


TOOLS: dict[str, Tool[Any, Any]] = {
    t.name: t
    for t in (
        Tool("memory_search", MemorySearchInput, SearchOutput, _search, _render_search),
        Tool(
            "memory_store",
            MemoryStoreInput,
            StoredMemory,
            _store,
            _render_store,
            read_only=False,
        ),
        Tool("memory_get", MemoryGetInput, Excerpt, get_excerpt, render_get),
        Tool(
            "memory_forget",
            MemoryForgetInput,
            ForgetOutput,
            _forget,
            _render_forget,
            read_only=False,
            destructive=True,
        ),
        Tool("memory_list", MemoryListInput, ListOutput, _list, _render_list),
        Tool(
            "memory_restore",
            MemoryRestoreInput,
            StoredMemory,
            restore_memory,
            render_restore,
            read_only=False,
        ),
        Tool("memory_stats", MemoryStatsInput, StatsOutput, _stats, _render_stats),
    )
}


# --------------------------------------------------------------------------- calling


@dataclass(frozen=True)
class ToolResult:
    """What a surface hands back: text for the model, data for programs, and whether it
    worked (``ok=False`` is a tool error whose ``text`` says what to fix)."""

    ok: bool
    text: str
    data: dict[str, Any] | None = None


class Toolbox:
    """The tools bound to one open ``Memory``; calls are serialised by ``lock`` (shared with a
    file watcher when one runs)."""

    def __init__(self, memory: Memory | Keeper, lock: threading.RLock | None = None) -> None:
        # The keeper reopens (and heals) the index when it is replaced, removed or damaged
        # under a long-lived server, and runs the call again.
        self.keeper = memory if isinstance(memory, Keeper) else Keeper(memory, lock)
        self.lock = self.keeper.lock

    @property
    def memory(self) -> Memory:
        return self.keeper.memory

    @property
    def tools(self) -> list[Tool[Any, Any]]:
        return list(TOOLS.values())

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        tool = TOOLS.get(name)
        if tool is None:
            return ToolResult(
                False, f"unknown tool {name!r}; the tools are: {', '.join(sorted(TOOLS))}"
            )
        try:
            args = tool.input.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            return ToolResult(False, f"{name}: invalid arguments: {_explain(exc)}")
        try:
            out = self.keeper.run(lambda memory: tool.run(memory, args))
        except EngramError as exc:
            return ToolResult(False, f"{name}: {exc}")
        except Exception as exc:  # a bug or a broken plugin: report it, keep serving
            log.exception("tool %s failed", name)
            return ToolResult(
                False,
                f"{name} failed unexpectedly ({type(exc).__name__}); the server log has the "
                "details. Try again, or run `engram doctor`",
            )
        return ToolResult(True, tool.render(out), out.model_dump(mode="json"))


def _explain(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors()[:5]:
        where = ".".join(str(p) for p in err["loc"]) or "arguments"
        msg = "unknown argument" if err["type"] == "extra_forbidden" else err["msg"]
        parts.append(f"{where}: {msg}")
    return "; ".join(parts)
