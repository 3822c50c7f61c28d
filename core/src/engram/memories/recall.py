"""Recall: the block of memories an agent is given at the start of a session.

The most relevant memories for a query (or, without one, the newest memory files), duplicates
and near-duplicates dropped, each with the path it came from, packed into a token budget counted
with the bundled WordPiece tokenizer. The whole block is counted, header included, every time
something is added, so the result is never over budget; when not even one memory fits, the
block is empty.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

from engram.chunking import read_frontmatter
from engram.errors import ConfigError, EmptyQuery
from engram.ingest.document_ids import document_path
from engram.ingest.sources import SEARCHABLE, source_filter
from engram.memories import entry as search_entry
from engram.memories.agent import list_memories
from engram.memories.judge.conflicts import created_at_of, note, older_conflicts
from engram.memories.policy import MemorySearch
from engram.memories.writer import Writer
from engram.models import MemoryInfo, Metadata
from engram.text.redact import strip_private
from engram.text.tokens import Tokenizer, default_tokenizer
from engram.types import PINNED_TYPES  # what a session opens with, newest first

HEADER = "# Relevant memories (engram)\nCite the path in brackets when you rely on one."
SEPARATOR = "\n\n"
ELLIPSIS = " …"
MIN_EXCERPT_TOKENS = 24  # below this a shortened memory says too little to be worth its place
NEAR_DUPLICATE = 0.85  # word-set Jaccard similarity at which two memories say the same thing
ADDS_NOTHING = 0.9  # share of a memory's words already in a better one: it adds nothing new
_WORD = re.compile(r"\w+")


class RecallItem(BaseModel):
    """One memory in the block and where it came from."""

    path: str
    id: str | None = None  # the chunk's id, when the memory came from search
    memory_id: str | None = None  # the memory's id, for files of a memory folder
    start_line: int | None = None
    end_line: int | None = None
    source: str = "memory"
    role: str | None = None
    title: str | None = None
    score: float | None = None
    text: str
    truncated: bool = False
    conflicts_with: list[str] = Field(default_factory=list)  # older memories it may contradict

    def location(self) -> str:
        if self.source == "sessions" and self.start_line is not None:
            who = f", {self.role}" if self.role else ""
            return f"{self.path} turn {self.start_line}{who}"
        if self.start_line is not None and self.end_line is not None:
            return f"{self.path}:{self.start_line}-{self.end_line}"
        return self.path


class Recall(BaseModel):
    """The block to inject (``text``), what it holds, and its size in tokens."""

    query: str | None = None
    budget: int
    tokens: int
    text: str
    items: list[RecallItem] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


def recall(
    writer: Writer,
    search: MemorySearch,
    query: str | None,
    *,
    budget: int | None = None,
    source: str | None = None,
    tokenizer: Tokenizer | None = None,
    pinned: bool = False,
) -> Recall:
    """Build the recall block for ``query`` within ``budget`` tokens (default ``[recall]``);
    ``pinned`` (the session-start block) puts the live preferences, decisions and project brief
    first, newest first, then the hits."""
    limit = writer.config.recall.budget if budget is None else budget
    if limit < 0:
        raise ConfigError(f"the recall budget must be 0 or more tokens, got {limit}")
    if source is not None and source not in SEARCHABLE:
        raise ConfigError(f"unknown source {source!r}; use one of {', '.join(SEARCHABLE)}")
    clean_query = " ".join(strip_private(query or "").split()) or None
    warnings: list[str] = []
    candidates: list[RecallItem] = []
    if clean_query:
        try:
            candidates = _search(writer, search, clean_query, source)
        except EmptyQuery:
            warnings.append("the query has no words to search for; recalling recent memories")
            clean_query = None
    # Every memory file is read (its YAML parsed) once, for the recent and the pinned alike.
    live = list_memories(writer) if source != "sessions" and (pinned or not clean_query) else []
    if clean_query is None and source != "sessions":
        candidates = _recent(writer, live)
    if pinned and source != "sessions":
        candidates = [*_pinned(writer, live), *candidates]
    text, items = build_block(candidates, limit, tokenizer or default_tokenizer())
    writer.access.record((i.path, i.memory_id) for i in items if i.memory_id)
    count = (tokenizer or default_tokenizer()).count(text)
    return Recall(
        query=clean_query, budget=limit, tokens=count, text=text, items=items, warnings=warnings
    )


def _search(
    writer: Writer, search: MemorySearch, query: str, source: str | None
) -> list[RecallItem]:
    flt = source_filter(source) if source else None
    # Accesses are counted for what the block holds, not for every candidate.
    # What a session is given unasked must be relevant hit by hit: a search shows its whole
    # ranking once its best hit clears min_score (``Fused.shown``), the block only the hits
    # that clear it themselves (fused score or cosine) or that the keyword side matched, and
    # the live memories of a type the query names (``hit_floor``).
    result = search_entry.search(
        search,
        query,
        limit=writer.config.recall.candidates,
        filter=flt,
        hit_floor=writer.config.search.min_score,
    )
    hits = result.hits
    items = []
    created = created_at_of(h.chunk.metadata for h in hits)
    for hit in hits:
        meta = hit.chunk.metadata
        items.append(
            RecallItem(
                path=hit.chunk.document_id,
                id=hit.chunk.id,
                start_line=_int(meta.get("start_line")),
                end_line=_int(meta.get("end_line")),
                source=str(meta.get("source", "memory")),
                role=_str(meta.get("role")),
                title=_str(meta.get("title")),
                score=hit.score,
                text=hit.chunk.text,
                memory_id=_memory_id(meta),
                conflicts_with=older_conflicts(meta, created),
            )
        )
    return items


def _memory_id(meta: Metadata) -> str | None:
    """The memory id of a chunk from a writable memory folder (their accesses are counted)."""
    memory_id = meta.get("id")
    in_folder = meta.get("memory_scope") in ("project", "user")
    return memory_id if in_folder and isinstance(memory_id, str) else None


def _pinned(writer: Writer, live: Sequence[MemoryInfo]) -> list[RecallItem]:
    """The live memories of ``PINNED_TYPES`` in every folder (project and user), newest first."""
    found = [m for t in PINNED_TYPES for m in live if m.type == t]
    found.sort(key=lambda m: m.updated_at or m.created_at or "", reverse=True)
    return _items(writer, found[: writer.config.recall.candidates])


def _recent(writer: Writer, live: Sequence[MemoryInfo]) -> list[RecallItem]:
    """Newest live memories of every folder first, as whole bodies (frontmatter left out)."""
    return _items(writer, live[: writer.config.recall.candidates])


def _items(writer: Writer, infos: Sequence[MemoryInfo]) -> list[RecallItem]:
    items = []
    created = {m.id: m.created_at for m in infos if m.id and m.created_at}
    for info in infos:
        text = document_path(info.path, writer.config.root).read_text(
            encoding="utf-8", errors="replace"
        )
        fm = read_frontmatter(text)
        total = text.count("\n") + (0 if text.endswith("\n") else 1)
        items.append(
            RecallItem(
                path=info.path,
                start_line=fm.body_start_line,
                end_line=max(total, fm.body_start_line),
                title=info.title,
                text=fm.body,
                memory_id=info.id,
                conflicts_with=older_conflicts(
                    info.model_dump(include={"id", "created_at", "conflicts_with"}), created
                ),
            )
        )
    return items


def _int(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


# --------------------------------------------------------------------------- packing


def build_block(
    candidates: Sequence[RecallItem], budget: int, tokenizer: Tokenizer
) -> tuple[str, list[RecallItem]]:
    """Pack candidates, best first, into at most ``budget`` tokens; ("", []) if none fits.

    Entries are costed one by one (the tokenizer never joins tokens across the blank line
    between entries); the finished block is counted again as a whole, and entries are dropped
    from the end should it ever come out over budget, so the limit holds whatever the tokenizer.
    """
    if budget <= 0:
        return "", []
    used = tokenizer.count(HEADER)
    if used > budget:
        return "", []
    entries: list[str] = []
    chosen: list[RecallItem] = []
    for item in deduplicate(candidates):
        text = _tidy(strip_private(item.text))
        if not text:
            continue
        entry = _render(len(chosen) + 1, item, text)
        cost = tokenizer.count(entry)
        if used + cost > budget:
            shortened = _shorten(len(chosen) + 1, item, text, budget - used, tokenizer)
            if shortened is None:
                continue
            entry, text, cost = shortened
            item = item.model_copy(update={"truncated": True})
        entries.append(entry)
        chosen.append(item.model_copy(update={"text": text}))
        used += cost
    while chosen:
        block = SEPARATOR.join([HEADER, *entries])
        if tokenizer.count(block) <= budget:
            return block, chosen
        entries.pop()
        chosen.pop()
    return "", []


def _tidy(text: str) -> str:
    """Lines kept (code and lists stay readable), blank lines and trailing space dropped."""
    return "\n".join(line.rstrip() for line in text.strip().splitlines() if line.strip())


def _render(number: int, item: RecallItem, text: str) -> str:
    return f"[{number}] {strip_private(item.location())}{_note(item)}\n{text}"


def _note(item: RecallItem) -> str:
    return note(item.conflicts_with)


def _shorten(
    number: int, item: RecallItem, text: str, room: int, tokenizer: Tokenizer
) -> tuple[str, str, int] | None:
    """(entry, text, cost) for the longest token-boundary prefix of ``text`` whose entry costs
    at most ``room`` tokens, or None when what would fit is too short to be useful."""
    if room - tokenizer.count(_render(number, item, "")) < MIN_EXCERPT_TOKENS:
        return None
    offsets = tokenizer.encode_with_offsets(text)
    best: tuple[str, str, int] | None = None
    low, high = MIN_EXCERPT_TOKENS, min(room, len(offsets))
    while low <= high:  # binary search on the number of tokens kept
        keep = (low + high) // 2
        short = text[: offsets[keep - 1][1]].rstrip() + ELLIPSIS
        entry = _render(number, item, short)
        cost = tokenizer.count(entry)
        if cost <= room:
            best = (entry, short, cost)
            low = keep + 1
        else:
            high = keep - 1
    return best


@dataclass(slots=True)
class _Seen:
    keys: set[object]
    texts: set[str]
    words: list[frozenset[str]]


def deduplicate(candidates: Sequence[RecallItem]) -> list[RecallItem]:
    """Drop repeats: the same chunk or place, the same text, or nearly the same words as a
    better-ranked memory."""
    seen = _Seen(set(), set(), [])
    out = []
    for item in candidates:
        keys: set[object] = {("place", item.path, item.start_line, item.end_line)}
        if item.id:
            keys.add(("chunk", item.id))
        norm = " ".join(item.text.casefold().split())
        words = frozenset(_WORD.findall(norm))
        if keys & seen.keys or norm in seen.texts:
            continue
        if len(words) >= 5 and any(_repeats(words, w) for w in seen.words):
            continue
        seen.keys |= keys
        seen.texts.add(norm)
        seen.words.append(words)
        out.append(item)
    return out


def _repeats(new: frozenset[str], earlier: frozenset[str]) -> bool:
    """Nearly the same words, or (almost) nothing that the earlier memory does not say."""
    shared = len(new & earlier)
    union = len(new | earlier)
    return shared / union >= NEAR_DUPLICATE or shared / len(new) >= ADDS_NOTHING
