"""Memories as MCP resources, and the server's two prompts (what ``engram.mcp`` serves besides
tools). Plain functions over a ``Toolbox``, so they run under its lock with the index brought up
to the memory folders first, as every tool call is.

- Resources: each live stored memory is ``engram://memory/<id>`` (``resources/list``, newest
  first, paged by a cursor); ``resources/read`` gives its markdown, ``<private>`` spans removed.
  ``engram://file/<path>`` reads any file search shows (a vault note, a session), as
  ``memory_get`` does: both are resource templates.
- Prompts: ``recall`` (the memories relevant to a task, with how to use them) and
  ``summarize_session`` (turn this conversation, or an indexed session, into a session-summary
  memory).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from engram.errors import EngramError
from engram.memories import agent as memories
from engram.memories.files import MEMORY_ID, without_private
from engram.memory import Memory
from engram.tools.connector import FILE_URI, MEMORY_URI, memory_uri
from engram.tools.get import MemoryGetInput
from engram.tools.get import get as get_excerpt
from engram.tools.toolbox import Toolbox

PAGE = 100
MAX_SESSION_CHARS = 40_000
MARKDOWN = "text/markdown"


class ContentError(ValueError):
    """A resource or prompt request that cannot be answered; its message says what to fix."""


class Listed(BaseModel):
    uri: str
    name: str
    title: str
    description: str
    size: int | None = None


class Template(BaseModel):
    uri_template: str
    name: str
    description: str


TEMPLATES = [
    Template(
        uri_template=MEMORY_URI + "{id}",
        name="memory",
        description="A stored memory by its id (memory_list and search show ids).",
    ),
    Template(
        uri_template=FILE_URI + "{path}",
        name="file",
        description="A note, memory or session by the path search results show.",
    ),
]


def list_memories(box: Toolbox, cursor: str | None) -> tuple[list[Listed], str | None]:
    """One page of live memories, newest first, and the cursor of the next page."""
    try:
        start = int(cursor) if cursor else 0
        if start < 0:
            raise ValueError
    except ValueError:
        raise ContentError(f"bad cursor {cursor!r}: pass the nextCursor of the last page") from None
    every = box.run(lambda m: m.list_memories())
    page = every[start : start + PAGE]
    items = [
        Listed(
            uri=memory_uri(m.id),
            name=m.id,
            title=m.title,
            description=f"{m.type or 'note'} memory ({m.scope or 'project'}), created "
            f"{m.created_at or 'unknown'}" + (f"; tags: {', '.join(m.tags)}" if m.tags else ""),
        )
        for m in page
        if m.id
    ]
    after = start + len(page)
    return items, str(after) if after < len(every) else None


def read(box: Toolbox, uri: str) -> str:
    """The markdown behind ``uri`` (private spans removed)."""

    def work(memory: Memory) -> str:
        if uri.startswith(MEMORY_URI):
            memory_id = uri[len(MEMORY_URI) :]
            if not MEMORY_ID.match(memory_id):
                raise ContentError(f"{uri} names no memory: ids look like 20250131-120000-abc123")
            path = memories.find(memory.writer, memory_id)[0]
            return without_private(path.read_text(encoding="utf-8", errors="replace"))
        if uri.startswith(FILE_URI):
            return get_excerpt(memory, MemoryGetInput(path=uri[len(FILE_URI) :])).text
        raise ContentError(
            f"unknown resource {uri!r}; engram serves {MEMORY_URI}<id> and {FILE_URI}<path>"
        )

    try:
        return box.run(work)
    except EngramError as exc:
        raise ContentError(str(exc)) from None


# --------------------------------------------------------------------------- prompts


class PromptArg(BaseModel):
    name: str
    description: str
    required: bool


class PromptSpec(BaseModel):
    name: str
    title: str
    description: str
    arguments: list[PromptArg]


PROMPTS = {
    "recall": PromptSpec(
        name="recall",
        title="Recall for a task",
        description="What engram remembers that bears on a task, to read before starting it.",
        arguments=[PromptArg(name="task", description="The task, in words.", required=True)],
    ),
    "summarize_session": PromptSpec(
        name="summarize_session",
        title="Summarize a session",
        description="Turn this conversation (or an indexed past session) into a "
        "session-summary memory: what was done, decided and left open.",
        arguments=[
            PromptArg(
                name="session",
                description="A session path from search results (sessions/…); default: this "
                "conversation.",
                required=False,
            ),
            PromptArg(name="focus", description="What the summary should stress.", required=False),
        ],
    ),
}


def prompt(box: Toolbox, name: str, arguments: dict[str, Any] | None) -> tuple[str, str]:
    """(description, the user message text) of prompt ``name``."""
    spec = PROMPTS.get(name)
    if spec is None:
        raise ContentError(f"unknown prompt {name!r}; the prompts are: {', '.join(PROMPTS)}")
    args = {k: str(v) for k, v in (arguments or {}).items()}
    unknown = sorted(set(args) - {a.name for a in spec.arguments})
    if unknown:
        raise ContentError(f"{name}: unknown argument {', '.join(unknown)}")
    for arg in spec.arguments:
        if arg.required and not args.get(arg.name, "").strip():
            raise ContentError(f"{name}: the argument {arg.name!r} is required ({arg.description})")
    try:
        if name == "recall":
            return spec.description, _recall_text(box, args["task"].strip())
        return spec.description, _summary_text(box, args.get("session"), args.get("focus"))
    except EngramError as exc:
        raise ContentError(f"{name}: {exc}") from None


def _recall_text(box: Toolbox, task: str) -> str:
    block = box.run(lambda m: m.recall(task))
    found = block.text or "(engram remembers nothing that bears on this task.)"
    more = "memory_search" if not box.read_only else "memory_search (read-only server)"
    return (
        f"{found}\n\nThe task: {task}\n\nUse the memories above where they apply and cite the "
        f"path in brackets when you rely on one. If something is missing, look with {more} "
        "before asking the user."
    )


def _summary_text(box: Toolbox, session: str | None, focus: str | None) -> str:
    if session and session.strip():
        excerpt = box.run(lambda m: get_excerpt(m, MemoryGetInput(path=session.strip())))
        text = excerpt.text
        if len(text) > MAX_SESSION_CHARS:
            text = "…" + text[-MAX_SESSION_CHARS:]
        source = f"the session {excerpt.path} below"
        transcript = f"\n\n<session>\n{text}\n</session>"
    else:
        source, transcript = "this conversation so far", ""
    stress = f" Stress: {focus.strip()}." if focus and focus.strip() else ""
    if box.read_only:
        store = "Give the summary as your answer (this server is read-only and stores nothing)."
    else:
        store = (
            'Then store it with memory_store (type "session-summary", a short title naming the '
            "work); store each lasting decision or preference apart with its own type."
        )
    return (
        f"Summarize {source} as a session summary of at most 10 bullet points: what was done, "
        "what was decided and why, what failed and how it was solved, what is left open. Keep "
        f"names, commands, paths and numbers exact; leave out secrets.{stress} {store}"
        f"{transcript}"
    )
