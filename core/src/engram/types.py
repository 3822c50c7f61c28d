"""The memory types in one table: what each means, whether extractors look for it, how it ages,
and the few traits search and the write path give it.

Everything that behaves by type reads this table instead of comparing strings: the ``llm``
extractor's prompt (``description``), the ``rules`` extractor and ``[capture] types``
(``extracted``), aging (``aging``), write-time dedup (``structural``), recall's opening block
(``pinned``) and type-aware search (``words``). Adding a type is one row here plus its name in
``MemoryType`` (a ``Literal``, so pydantic, typer and mypy know the names; a test keeps the two
equal).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

MemoryType = Literal[
    "project-brief",
    "architecture",
    "tech-context",
    "preference",
    "learned-pattern",
    "error-solution",
    "project-config",
    "progress",
    "session-summary",
    "decision",
    "fact",
    "entity",
    "note",
]

# How a type ages (engram.memories.judge.aging): ``never``; ``latest-only``: only the newest of a
# project stays live (``[lifecycle] latest_progress_only``); ``condense``: the newest
# ``[lifecycle] keep_session_summaries`` stay live, older ones are condensed into one
# learned-pattern (or archived when the extractor cannot condense).
Aging = Literal["never", "latest-only", "condense"]


@dataclass(frozen=True)
class TypeInfo:
    """One memory type. ``description`` is what the type holds, as an extractor's model reads it;
    ``structural``: describes the project itself (brief, stack, settings), so near wordings are
    merged from further apart; ``pinned``: opens every recall block; ``words``: words of a
    question that ask for this type (few, unambiguous); ``importance``: the default of a memory
    of this type."""

    name: MemoryType
    description: str
    extracted: bool = True
    aging: Aging = "never"
    structural: bool = False
    pinned: bool = False
    words: tuple[str, ...] = ()
    importance: float = 1.0


TYPES: tuple[TypeInfo, ...] = (
    TypeInfo(
        "project-brief",
        "what the project is and is for, in two or three sentences",
        structural=True,
        pinned=True,
    ),
    TypeInfo(
        "architecture",
        "how the system is built: components, data flow, boundaries",
        structural=True,
    ),
    TypeInfo(
        "tech-context",
        "languages, frameworks, libraries, services and their versions",
        structural=True,
    ),
    TypeInfo(
        "preference",
        "how the user likes things done (style, tools, habits); firm rules too",
        pinned=True,
        words=("preference", "preferences"),
    ),
    TypeInfo("learned-pattern", "a lesson that generalises: what works or fails here, and why"),
    TypeInfo("error-solution", "an error or failure and what fixed it (both, in one memory)"),
    TypeInfo(
        "project-config",
        "commands, ports, paths, environment variables, settings",
        structural=True,
    ),
    TypeInfo(
        "progress",
        "where the work stands: what is done, what is next",
        aging="latest-only",
    ),
    TypeInfo(
        "session-summary",
        "what one working session was about, what was decided and done",
        aging="condense",
    ),
    TypeInfo(
        "decision",
        "a choice that was made, with its reason when given",
        pinned=True,
        words=("decision", "decisions"),
    ),
    TypeInfo(
        "fact",
        "what the user states about themselves: an event, a possession, a plan",
    ),
    TypeInfo("entity", "a person, service or thing worth knowing about", extracted=False),
    TypeInfo("note", "anything else, written by hand or by an agent", extracted=False),
)

BY_NAME: dict[str, TypeInfo] = {t.name: t for t in TYPES}
NAMES: tuple[MemoryType, ...] = get_args(MemoryType)
EXTRACTED_TYPES: tuple[MemoryType, ...] = tuple(t.name for t in TYPES if t.extracted)
STRUCTURAL_TYPES: tuple[MemoryType, ...] = tuple(t.name for t in TYPES if t.structural)
PINNED_TYPES: tuple[MemoryType, ...] = tuple(t.name for t in TYPES if t.pinned)
TYPE_WORDS: dict[str, MemoryType] = {w: t.name for t in TYPES for w in t.words}


def types_aging(rule: Aging) -> tuple[MemoryType, ...]:
    """The types that age by ``rule``."""
    return tuple(t.name for t in TYPES if t.aging == rule)


def ages(type: str | None) -> bool:
    """Whether writing a memory of ``type`` can make older ones stale (aging runs after it)."""
    info = BY_NAME.get(type or "")
    return info is not None and info.aging != "never"
