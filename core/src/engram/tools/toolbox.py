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
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from engram.errors import EngramError
from engram.keeper import Keeper
from engram.memories.judge.conflicts import conflict_note
from engram.memories.lifecycle.history import History
from engram.memories.recall import Recall
from engram.memories.scopes import Scope
from engram.memory import Memory
from engram.models import Excerpt, MemoryInfo, MemoryType, OnCollision, StoredMemory
from engram.tools import connector, reading
from engram.tools import edit as tool_edit
from engram.tools import search as search_tool
from engram.tools.freshness import Freshness
from engram.tools.get import MemoryGetInput, render_get
from engram.tools.get import get as get_excerpt
from engram.tools.restore import MemoryRestoreInput, render_restore
from engram.tools.restore import restore as restore_memory
from engram.tools.search import MemorySearchInput, SearchOutput

__all__ = [
    "READ_ONLY_TOOLS",
    "TOOLS",
    "MemorySearchInput",
    "SearchOutput",
    "Tool",
    "ToolResult",
    "Toolbox",
]

log = logging.getLogger(__name__)

MAX_CONTENT = 100_000


class _Input(BaseModel):
    model_config = ConfigDict(extra="forbid")


# --------------------------------------------------------------------------- inputs


class MemoryStoreInput(_Input):
    """Save something worth remembering (a fact, decision, preference, lesson) as a markdown
    memory. Storing the same fact again updates that memory instead of adding a copy."""

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
        description="File name inside the memory folder (default: <type>/<title>.md). A "
        "near-duplicate of a stored memory updates that memory instead of writing a new file.",
    )
    on_collision: OnCollision | None = Field(
        default=None,
        description="When that file exists already: new (keep both, a number added to the new "
        "name), update (a new revision of it, its old text kept), fail (refuse). Default: the "
        "[memory] on_collision setting (new).",
    )
    subject: str | None = Field(
        default=None,
        max_length=200,
        description="Who or what the memory is about (a person, 'user', 'project', a service); "
        "default: read from the content. Memories about different subjects never replace "
        "each other.",
    )


class MemoryForgetInput(_Input):
    """Delete a stored memory for good: its file and everything indexed from it. To correct a
    memory, use memory_edit instead (it keeps the earlier wording)."""

    id: str = Field(
        min_length=1,
        max_length=1000,
        description="The memory's id (from memory_store or memory_list) or its path.",
    )


class MemoryListInput(_Input):
    """List stored memories (ids, titles, types, dates), newest first, filtered by type, scope,
    tag or creation date; page with offset (next_offset says where the next page starts)."""

    type: MemoryType | None = None
    scope: Scope | None = None
    tag: str | None = Field(default=None, max_length=64)
    subject: str | None = Field(
        default=None, max_length=200, description="Only memories about this subject (any case)."
    )
    since: date | None = Field(default=None, description="Created on or after (YYYY-MM-DD).")
    until: date | None = Field(default=None, description="Created on or before (YYYY-MM-DD).")
    limit: int = Field(default=50, ge=1, le=500, description="Memories on this page.")
    offset: int = Field(default=0, ge=0, description="How many to skip (for the next page).")
    include_superseded: bool = Field(default=False, description="Also list history.")


class MemoryStatsInput(_Input):
    """How much is stored: documents and chunks by source, memories by type and scope, the
    index and embedder in use."""


# --------------------------------------------------------------------------- outputs


class ForgetOutput(BaseModel):
    removed: list[str]


class ListOutput(BaseModel):
    count: int
    total: int = 0
    next_offset: int | None = None
    memories: list[MemoryInfo]


class StatsOutput(BaseModel):
    """``engram.memories.stats.collect``'s counts (the CLI and the dashboard show the same)."""

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

T = TypeVar("T")
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
    # Calling it again with the same arguments changes nothing more (reads; forget; edit).
    idempotent: bool = True
    title: str = ""

    @property
    def description(self) -> str:
        return " ".join((self.input.__doc__ or self.name).split())

    def input_schema(self) -> dict[str, Any]:
        return self.input.model_json_schema()

    def output_schema(self) -> dict[str, Any]:
        return self.output.model_json_schema(mode="serialization")


def _store(memory: Memory, args: MemoryStoreInput) -> StoredMemory:
    # Every field but the content is a keyword of remember, under the same name.
    return memory.remember(args.content, **args.model_dump(exclude={"content"}))


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
    every = memory.list_memories(
        type=args.type,
        scope=args.scope,
        tag=args.tag,
        subject=args.subject,
        since=args.since.isoformat() if args.since else None,
        until=args.until.isoformat() + "T23:59:59.999+00:00" if args.until else None,
        include_superseded=args.include_superseded,
    )
    page = every[args.offset : args.offset + args.limit]
    after = args.offset + len(page)
    return ListOutput(
        count=len(page),
        total=len(every),
        next_offset=after if after < len(every) else None,
        memories=page,
    )


def _render_list(out: ListOutput) -> str:
    if not out.memories:
        return "No memories match." if not out.total else f"No more memories ({out.total} match)."
    more = f"; next page: offset {out.next_offset}" if out.next_offset is not None else ""
    lines = [f"{out.count} of {out.total} memories{more}:"]
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


TOOLS: dict[str, Tool[Any, Any]] = {
    t.name: t
    for t in (
        Tool(
            "memory_search",
            MemorySearchInput,
            SearchOutput,
            search_tool.search,
            search_tool.render_search,
            title="Search memory",
        ),
        Tool(
            "memory_store",
            MemoryStoreInput,
            StoredMemory,
            _store,
            _render_store,
            read_only=False,
            idempotent=False,
            title="Store a memory",
        ),
        Tool(
            "memory_get",
            MemoryGetInput,
            Excerpt,
            get_excerpt,
            render_get,
            title="Read a file or session",
        ),
        Tool(
            "memory_edit",
            tool_edit.MemoryEditInput,
            StoredMemory,
            tool_edit.edit,
            tool_edit.render_edit,
            read_only=False,
            title="Edit a memory",
        ),
        Tool(
            "memory_move",
            tool_edit.MemoryMoveInput,
            tool_edit.MoveOutput,
            tool_edit.move,
            tool_edit.render_move,
            read_only=False,
            idempotent=False,
            title="Move a memory",
        ),
        Tool(
            "memory_forget",
            MemoryForgetInput,
            ForgetOutput,
            _forget,
            _render_forget,
            read_only=False,
            destructive=True,
            title="Forget a memory",
        ),
        Tool(
            "memory_restore",
            MemoryRestoreInput,
            StoredMemory,
            restore_memory,
            render_restore,
            read_only=False,
            idempotent=False,
            title="Restore an earlier version",
        ),
        Tool(
            "memory_list", MemoryListInput, ListOutput, _list, _render_list, title="List memories"
        ),
        Tool(
            "memory_history",
            reading.MemoryHistoryInput,
            History,
            reading.history,
            reading.render_history,
            title="A memory's history",
        ),
        Tool(
            "memory_recall",
            reading.MemoryRecallInput,
            Recall,
            reading.recall,
            reading.render_recall,
            title="Recall for a task",
        ),
        Tool(
            "memory_tags",
            reading.MemoryTagsInput,
            reading.TagsOutput,
            reading.tags,
            reading.render_tags,
            title="Tags in use",
        ),
        Tool(
            "memory_recent",
            reading.MemoryRecentInput,
            reading.RecentOutput,
            reading.recent,
            reading.render_recent,
            title="Recent activity",
        ),
        Tool(
            "memory_usage",
            reading.MemoryUsageInput,
            reading.UsageOutput,
            reading.usage,
            reading.render_usage,
            title="API usage and cost",
        ),
        Tool(
            "memory_stats",
            MemoryStatsInput,
            StatsOutput,
            _stats,
            _render_stats,
            title="Index statistics",
        ),
        # The pair ChatGPT's connectors call (engram.tools.connector).
        Tool(
            "search",
            connector.SearchInput,
            connector.ConnectorSearchOutput,
            connector.search,
            connector.render_json,
            title="Search (connector)",
        ),
        Tool(
            "fetch",
            connector.FetchInput,
            connector.FetchOutput,
            connector.fetch,
            connector.render_json,
            title="Fetch (connector)",
        ),
    )
}
READ_ONLY_TOOLS = frozenset(name for name, tool in TOOLS.items() if tool.read_only)


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
    file watcher when one runs).

    ``read_only``: only the reading tools are served, and a call to a writing one is refused
    (``engram mcp --read-only``, to hand recall to a delegate that must not change memory).
    ``fresh``: before each call, memories other processes wrote since the last call are
    indexed (``engram.tools.freshness``), so a long-lived server needs no manual re-index."""

    def __init__(
        self,
        memory: Memory | Keeper,
        lock: threading.RLock | None = None,
        *,
        read_only: bool = False,
        fresh: bool = True,
    ) -> None:
        # The keeper reopens (and heals) the index when it is replaced, removed or damaged
        # under a long-lived server, and runs the call again.
        self.keeper = memory if isinstance(memory, Keeper) else Keeper(memory, lock)
        self.lock = self.keeper.lock
        self.read_only = read_only
        self.freshness = Freshness() if fresh else None

    @property
    def memory(self) -> Memory:
        return self.keeper.memory

    @property
    def tools(self) -> list[Tool[Any, Any]]:
        return [t for t in TOOLS.values() if t.read_only or not self.read_only]

    def run(self, work: Callable[[Memory], T]) -> T:
        """``work(memory)`` under the lock, the index first brought up to the memory folders
        (what the resources and prompts read through, too)."""

        def fresh_then(memory: Memory) -> T:
            if self.freshness is not None:
                self.freshness.refresh(memory)
            return work(memory)

        return self.keeper.run(fresh_then)

    def call(self, name: str, arguments: Mapping[str, Any] | None = None) -> ToolResult:
        tool = TOOLS.get(name)
        if tool is None:
            served = sorted(t.name for t in self.tools)
            return ToolResult(False, f"unknown tool {name!r}; the tools are: {', '.join(served)}")
        if self.read_only and not tool.read_only:
            return ToolResult(
                False,
                f"{name} is refused: this server is read-only (engram mcp --read-only) and "
                "changes no memory; ask the user to store or change it",
            )
        try:
            args = tool.input.model_validate(dict(arguments or {}))
        except ValidationError as exc:
            return ToolResult(False, f"{name}: invalid arguments: {_explain(exc)}")
        try:
            out = self.run(lambda memory: tool.run(memory, args))
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
