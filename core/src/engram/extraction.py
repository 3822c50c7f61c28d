"""What an extractor is shown: the conversation cut to its mode's window, private spans gone.

Every extractor (the offline ``rules``, the ``llm`` one, a third party's) sees the same input for
the same conversation, so their results compare. The windows (seed constants, see
docs/memory-lifecycle.md):

- ``normal``: 8 messages, at most 8,000 characters: many typed facts. ``prepare`` keeps the
  last 8 (``llm`` calls it so; ``rules``, being cheap, reads all it is given); capture reads the
  whole conversation in such windows (``split_windows``), adjacent ones sharing ``OVERLAP``
  messages, so nothing goes unseen;
- ``summary``: the last 20 messages, at most 4,000 characters: one session summary;
- ``init``: project files (README first), at most 7,000 characters: facts and a project brief.

A conversation keeps its newest text when cut (the oldest kept message loses its start);
project files keep their first files and the start of the file that does not fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

from engram.errors import ConfigError
from engram.models import ExtractedMemory, ExtractionMode, MemoryType, Message
from engram.text.redact import strip_private

MODES: tuple[ExtractionMode, ...] = get_args(ExtractionMode)
OVERLAP = 3  # messages adjacent capture windows share: an error and a fix up to 3 apart pair
MIN_PIECE = 200  # characters: a cut message shorter than this says too little to keep
CUT = "…"


@dataclass(frozen=True, slots=True)
class Window:
    """How much of a conversation a mode reads: the last ``messages`` (None: all) and at most
    ``chars`` characters of their text."""

    messages: int | None
    chars: int


DEFAULT_WINDOWS: dict[ExtractionMode, Window] = {
    "normal": Window(8, 8_000),
    "summary": Window(20, 4_000),
    "init": Window(None, 7_000),
}


def check_mode(mode: str) -> ExtractionMode:
    """``mode`` if it is one of the three, else a ``ConfigError`` that lists them."""
    for known in MODES:
        if mode == known:
            return known
    raise ConfigError(f"unknown extraction mode {mode!r}; use one of {', '.join(MODES)}")


def prepare(
    messages: Sequence[Message], mode: ExtractionMode, window: Window | None = None
) -> list[Message]:
    """The messages an extractor gets for ``mode``: private spans removed, empty messages
    dropped, cut to the window (``DEFAULT_WINDOWS[mode]`` unless given)."""
    mode = check_mode(mode)
    limits = window or DEFAULT_WINDOWS[mode]
    clean = [m for _, m in cleaned(messages)]
    if mode == "init":
        return _keep_first(clean, limits.chars)
    if limits.messages is not None:
        clean = clean[-limits.messages :] if limits.messages > 0 else []
    return _keep_last(clean, limits.chars)


def cleaned(messages: Sequence[Message]) -> list[tuple[int, Message]]:
    """(index in ``messages``, message) of every message that says something once its private
    spans are gone."""
    return [
        (i, m.model_copy(update={"content": text}))
        for i, m in enumerate(messages)
        if (text := strip_private(m.content).strip())
    ]


def split_windows(
    lengths: Sequence[int], window: Window, overlap: int = OVERLAP
) -> list[tuple[int, int]]:
    """Cut messages of these lengths (characters) into ``[start, end)`` windows of at most
    ``window.messages`` messages and ``window.chars`` characters that together cover every
    message; each starts ``overlap`` messages before the previous one ended. A message longer
    than ``window.chars`` is a window of its own (and is cut when read)."""
    size = window.messages if window.messages is not None else len(lengths)
    size = max(size, 1)
    spans: list[tuple[int, int]] = []
    start = 0
    while start < len(lengths):
        end, chars = start, 0
        while end < len(lengths) and end - start < size:
            if end > start and chars + lengths[end] > window.chars:
                break
            chars += lengths[end]
            end += 1
        spans.append((start, end))
        if end >= len(lengths):
            break
        start = max(start + 1, end - overlap)
    return spans


def _keep_last(messages: list[Message], budget: int) -> list[Message]:
    kept: list[Message] = []
    for message in reversed(messages):
        room = budget - sum(len(m.content) for m in kept)
        if len(message.content) <= room:
            kept.append(message)
            continue
        if room >= MIN_PIECE:
            tail = CUT + message.content[-(room - len(CUT)) :]
            kept.append(message.model_copy(update={"content": tail}))
        break
    kept.reverse()
    return kept


def _keep_first(messages: list[Message], budget: int) -> list[Message]:
    kept: list[Message] = []
    for message in messages:
        room = budget - sum(len(m.content) for m in kept)
        if len(message.content) <= room:
            kept.append(message)
            continue
        if room >= MIN_PIECE:
            head = message.content[: room - len(CUT)] + CUT
            kept.append(message.model_copy(update={"content": head}))
        break
    return kept


def conversation_text(messages: Sequence[Message]) -> str:
    """Messages as one transcript, a ``role: text`` paragraph each (what prompts quote)."""
    return "\n\n".join(f"{m.role}: {m.content}" for m in messages)


def keep_types(
    memories: Sequence[ExtractedMemory], types: Sequence[MemoryType]
) -> list[ExtractedMemory]:
    """Only the memories whose type is in ``types`` (``[capture] types``)."""
    allowed = set(types)
    return [m for m in memories if m.type in allowed]


def unique_memories(memories: Sequence[ExtractedMemory]) -> list[ExtractedMemory]:
    """Each memory once (same type and text, case and spacing aside), first one kept: overlapping
    windows, and several sentences of one message, find the same memory."""
    seen: set[tuple[str, str]] = set()
    out = []
    for m in memories:
        key = (m.type, " ".join(m.content.casefold().split()))
        if key not in seen:
            seen.add(key)
            out.append(m)
    return out
