"""Split documents into chunks small enough to embed, remembering exactly where each came from.

Two chunkers share one cutting rule: text is cut at token boundaries reported by the tokenizer and,
whenever possible, between words, so every chunk's own token count stays within ``max_tokens``
and its text is an exact slice of the source (``source[start_char:end_char]``). Line numbers are
1-based and count every line of the original file, frontmatter included, so a hit can point an
editor at the right place.
"""

from __future__ import annotations

import base64
import bisect
import datetime
import hashlib
import math
import re
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

import yaml
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from engram.config import ChunkingConfig
from engram.errors import ConfigError
from engram.models import Metadata
from engram.tokens import Tokenizer, TokenSpans, default_tokenizer

CHUNK_ID_LENGTH = 32
_YAML_NODE_BUDGET = 10_000
_YAML_MAX_DEPTH = 64


class ChunkSpan(BaseModel):
    """One chunk of a source text and where it sits in the original file."""

    model_config = ConfigDict(frozen=True)

    text: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    headings: list[str] = Field(default_factory=list)
    index: int = Field(ge=0)

    @property
    def heading_path(self) -> str:
        """The enclosing headings as one breadcrumb, e.g. ``Projects > engram > Storage``."""
        return " > ".join(self.headings)


class ChunkedDocument(BaseModel):
    """A document's chunks, its frontmatter and any problem met while reading it."""

    metadata: Metadata = Field(default_factory=dict)
    chunks: list[ChunkSpan] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class Chunker(Protocol):
    """What ingestion needs from a chunker; ``describe()`` goes into the store's index identity."""

    def chunk(self, text: str) -> list[ChunkSpan]: ...
    def chunk_document(self, text: str) -> ChunkedDocument: ...
    def describe(self) -> str: ...


# --------------------------------------------------------------------------- frontmatter


class FrontmatterWarning(UserWarning):
    """Frontmatter that could not be read; the text is kept as body so nothing is lost."""


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """Result of reading frontmatter. ``body`` is ``text[body_offset:]``."""

    metadata: Metadata
    body: str
    body_start_line: int
    body_offset: int
    warning: str | None = None


class _TooComplexError(ValueError):
    pass


def read_frontmatter(text: str) -> Frontmatter:
    """Split leading YAML frontmatter (between ``---`` lines) from the body, never raising.

    Malformed YAML is kept as body and described in ``warning``; YAML that is not a mapping is not
    frontmatter (the text is all body); an empty block is stripped with empty metadata.
    """
    start = 1 if text.startswith("\ufeff") else 0
    plain = Frontmatter({}, text[start:], 1, start)
    first_end = text.find("\n", start)
    if first_end < 0 or text[start:first_end].rstrip() != "---":
        return plain
    pos, line_no = first_end + 1, 2
    while True:
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip() in ("---", "..."):
            break
        if end < 0:
            return plain  # no closing delimiter: a thematic break, not frontmatter
        pos, line_no = end + 1, line_no + 1
    raw = text[first_end + 1 : pos]
    body_offset = len(text) if end < 0 else end + 1
    stripped = Frontmatter({}, text[body_offset:], line_no + 1, body_offset)
    if not raw.strip():
        return stripped
    try:
        loaded = yaml.safe_load(raw)
        if not isinstance(loaded, dict):
            return plain
        metadata = _json_mapping(loaded, [_YAML_NODE_BUDGET], 0)
    except (yaml.YAMLError, RecursionError, _TooComplexError) as exc:
        problem = str(exc).replace("\n", " ").strip() or type(exc).__name__
        message = (
            f"frontmatter (lines 1-{line_no}) is not valid YAML and was kept as text: {problem}; "
            "fix the YAML between the '---' lines to make it metadata"
        )
        return Frontmatter({}, text[start:], 1, start, message)
    return Frontmatter(metadata, stripped.body, stripped.body_start_line, body_offset)


def parse_frontmatter(text: str) -> tuple[Metadata, str, int]:
    """``(metadata, body, body_start_line)``; unreadable YAML emits a ``FrontmatterWarning``."""
    fm = read_frontmatter(text)
    if fm.warning:
        warnings.warn(fm.warning, FrontmatterWarning, stacklevel=2)
    return fm.metadata, fm.body, fm.body_start_line


def _json_mapping(value: dict[Any, Any], budget: list[int], depth: int) -> dict[str, JsonValue]:
    return {_json_key(k): _json_safe(v, budget, depth + 1) for k, v in value.items()}


def _json_key(key: Any) -> str:
    if isinstance(key, datetime.date | datetime.time):
        return key.isoformat()
    return key if isinstance(key, str) else str(key)


def _json_safe(value: Any, budget: list[int], depth: int) -> JsonValue:
    """YAML values → JSON values: dates become ISO strings, sets sorted lists, bytes base64."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _YAML_MAX_DEPTH:
        raise _TooComplexError("frontmatter is too large or too deeply nested")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return _json_mapping(value, budget, depth)
    if isinstance(value, set | frozenset):
        return [_json_safe(v, budget, depth + 1) for v in sorted(value, key=str)]
    if isinstance(value, list | tuple):
        return [_json_safe(v, budget, depth + 1) for v in value]
    return str(value)


# --------------------------------------------------------------------------- chunk ids


def chunk_id(document_id: str, text: str, occurrence: int = 0) -> str:
    """Stable id from content: unchanged chunks of an edited file keep their ids.

    ``occurrence`` tells apart identical chunk texts within one document (0 for the first).
    """
    digest = hashlib.sha256()
    for part in (document_id, text, str(occurrence)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:CHUNK_ID_LENGTH]


def chunk_ids(document_id: str, chunks: Sequence[ChunkSpan]) -> list[str]:
    """Ids for a document's chunks in order, counting repeats of the same text."""
    seen: dict[str, int] = {}
    ids = []
    for chunk in chunks:
        occurrence = seen.get(chunk.text, 0)
        seen[chunk.text] = occurrence + 1
        ids.append(chunk_id(document_id, chunk.text, occurrence))
    return ids


# --------------------------------------------------------------------------- token windows


def _check_sizes(max_tokens: int, overlap: int) -> None:
    if max_tokens < 1:
        raise ConfigError(f"chunking max_tokens must be at least 1, got {max_tokens}; raise it")
    if not 0 <= overlap < max_tokens:
        raise ConfigError(
            f"chunking overlap must be between 0 and max_tokens - 1 ({max_tokens - 1}), got "
            f"{overlap}; lower the overlap or raise max_tokens"
        )


def _token_windows(
    text: str,
    spans: TokenSpans,
    lo: int,
    hi: int,
    max_tokens: int,
    overlap: int,
    tokenizer: Tokenizer,
) -> list[tuple[int, int]]:
    """Character ranges of windows over tokens ``lo..hi`` of ``text``.

    Windows hold whole words (so each window tokenizes to exactly its own tokens) and consecutive
    windows share about ``overlap`` tokens: the next window starts at the last word boundary at
    least ``overlap`` tokens before the end (exactly ``overlap`` when words are single tokens),
    but late enough to reach past the previous window. A word longer than ``max_tokens`` is cut
    inside, by re-tokenizing what is left of it, without overlap.
    """
    words = spans.words
    starts = [k for k in range(lo, hi) if k == lo or words[k] != words[k - 1]]
    starts.append(hi)
    offsets = spans.offsets
    out: list[tuple[int, int]] = []
    w, last = 0, len(starts) - 1
    while w < last:
        if starts[w + 1] - starts[w] > max_tokens:
            out.extend(
                _split_word(
                    text,
                    offsets[starts[w]][0],
                    offsets[starts[w + 1] - 1][1],
                    max_tokens,
                    tokenizer,
                )
            )
            w += 1
            continue
        e = w + 1
        while e < last and starts[e + 1] - starts[w] <= max_tokens:
            e += 1
        out.append((offsets[starts[w]][0], offsets[starts[e] - 1][1]))
        if e >= last:
            break
        if overlap == 0 or starts[e + 1] - starts[e] > max_tokens:
            w = e
            continue
        # Last word start with >= overlap tokens after it; first one whose window takes word e.
        back = bisect.bisect_right(starts, starts[e] - overlap, w + 1, e + 1) - 1
        reach = bisect.bisect_left(starts, starts[e + 1] - max_tokens, w + 1, e + 1)
        w = max(back, reach, w + 1)
    return out


def _split_word(
    text: str, start: int, end: int, max_tokens: int, tokenizer: Tokenizer
) -> list[tuple[int, int]]:
    """Cut one over-long word greedily; a prefix cut at a token end keeps exactly those tokens."""
    out = []
    pos = start
    while pos < end:
        spans = tokenizer.spans(text[pos:end])
        if not spans.offsets:
            break
        if len(spans) <= max_tokens:
            out.append((pos, pos + spans.offsets[-1][1]))
            break
        cut = pos + spans.offsets[max_tokens - 1][1]
        out.append((pos, cut))
        pos = cut
    return out


class _Lines:
    """Line starts of a text, to map character offsets to 1-based line numbers."""

    def __init__(self, text: str, first_line: int = 1) -> None:
        self.starts = [0, *(m.end() for m in re.finditer("\n", text))]
        self.first_line = first_line

    def line_of(self, char: int) -> int:
        return bisect.bisect_right(self.starts, char) - 1 + self.first_line


class TokenWindowChunker:
    """Sliding windows of ``max_tokens`` tokens, consecutive windows sharing ``overlap`` tokens.

    ``chunk`` cuts the text as given; ``chunk_document`` first moves YAML frontmatter into
    metadata. Headings are not tracked (``headings`` is empty).
    """

    def __init__(
        self, max_tokens: int = 400, overlap: int = 80, tokenizer: Tokenizer | None = None
    ) -> None:
        _check_sizes(max_tokens, overlap)
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.tokenizer = tokenizer or default_tokenizer()

    def describe(self) -> str:
        return f"tokens:{self.max_tokens}/{self.overlap}"

    def chunk(self, text: str) -> list[ChunkSpan]:
        return self._chunk(text, 0, 1)

    def chunk_document(self, text: str) -> ChunkedDocument:
        fm = read_frontmatter(text)
        chunks = self._chunk(text, fm.body_offset, fm.body_start_line)
        return ChunkedDocument(
            metadata=fm.metadata, chunks=chunks, warnings=[fm.warning] if fm.warning else []
        )

    def _chunk(self, source: str, offset: int, first_line: int) -> list[ChunkSpan]:
        body = source[offset:]
        spans = self.tokenizer.spans(body)
        lines = _Lines(body, first_line)
        ranges = _token_windows(
            body, spans, 0, len(spans), self.max_tokens, self.overlap, self.tokenizer
        )
        return [
            ChunkSpan(
                text=body[a:b],
                start_line=lines.line_of(a),
                end_line=lines.line_of(b - 1),
                start_char=offset + a,
                end_char=offset + b,
                index=i,
            )
            for i, (a, b) in enumerate(ranges)
        ]


# --------------------------------------------------------------------------- markdown

_ATX = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*")
_FENCE_OPEN = re.compile(r" {0,3}(`{3,}|~{3,})(.*)")
_FENCE_CLOSE = re.compile(r" {0,3}(`{3,}|~{3,})[ \t]*")


@dataclass(slots=True)
class _Block:
    """Consecutive body lines that belong together: a heading, a paragraph or a fenced block."""

    first: int
    last: int
    path: tuple[str, ...]
    kind: Literal["heading", "text"]
    tokens: int = 0


def _blocks(lines: list[str], blank: list[bool]) -> list[_Block]:
    """Group lines into blocks and attach the heading path in effect at each block.

    ``blank[k]`` says line ``k`` holds no token; such lines separate paragraphs.
    """
    blocks: list[_Block] = []
    stack: list[tuple[int, str]] = []
    path: tuple[str, ...] = ()
    para: _Block | None = None
    fence: tuple[str, int] | None = None
    for k, raw in enumerate(lines):
        line = raw.rstrip()
        if fence is not None:
            blocks[-1].last = k
            close = _FENCE_CLOSE.fullmatch(line)
            if close and close.group(1)[0] == fence[0] and len(close.group(1)) >= fence[1]:
                fence = None
            continue
        opening = _FENCE_OPEN.fullmatch(line)
        if opening and not (opening.group(1)[0] == "`" and "`" in opening.group(2)):
            para = None
            fence = (opening.group(1)[0], len(opening.group(1)))
            blocks.append(_Block(k, k, path, "text"))
            continue
        if blank[k]:
            para = None
            continue
        heading = _ATX.fullmatch(line)
        if heading:
            para = None
            level, title = len(heading.group(1)), (heading.group(2) or "").strip()
            while stack and stack[-1][0] >= level:
                stack.pop()
            stack.append((level, title))
            path = tuple(t for _, t in stack if t)
            blocks.append(_Block(k, k, path, "heading"))
            continue
        if para is None:
            para = _Block(k, k, path, "text")
            blocks.append(para)
        else:
            para.last = k
    return blocks


class MarkdownChunker:
    """Markdown-aware chunks: frontmatter becomes metadata, sections follow the ATX headings.

    Blocks (paragraphs, fenced code, headings) of one section are packed up to ``max_tokens``; a
    heading with no text of its own joins its first subsection's chunk. A block larger than
    ``max_tokens`` is cut into windows of whole lines sharing about ``overlap`` tokens, and only a
    single line longer than ``max_tokens`` is cut inside (token windows). Packed blocks do not
    overlap: paragraph boundaries are natural cut points. Setext headings are not recognised.
    """

    def __init__(
        self, max_tokens: int = 400, overlap: int = 80, tokenizer: Tokenizer | None = None
    ) -> None:
        _check_sizes(max_tokens, overlap)
        self.max_tokens = max_tokens
        self.overlap = overlap
        self.tokenizer = tokenizer or default_tokenizer()

    def describe(self) -> str:
        return f"markdown:{self.max_tokens}/{self.overlap}"

    def chunk(self, text: str) -> list[ChunkSpan]:
        """Chunks of the body; frontmatter is dropped (see ``chunk_document`` to keep it)."""
        return self.chunk_document(text).chunks

    def chunk_document(self, text: str) -> ChunkedDocument:
        fm = read_frontmatter(text)
        chunks = _MarkdownPass(self, text, fm).run()
        return ChunkedDocument(
            metadata=fm.metadata, chunks=chunks, warnings=[fm.warning] if fm.warning else []
        )


class _MarkdownPass:
    """One document's worth of markdown chunking state."""

    def __init__(self, chunker: MarkdownChunker, source: str, fm: Frontmatter) -> None:
        self.chunker = chunker
        self.max = chunker.max_tokens
        self.source = source
        self.fm = fm
        self.body = fm.body
        self.lines = self.body.split("\n")
        self.line_starts = [0]
        for line in self.lines[:-1]:
            self.line_starts.append(self.line_starts[-1] + len(line) + 1)
        self.spans = chunker.tokenizer.spans(self.body)
        # Tokens never cross a newline (it is whitespace), so each line owns a token range.
        self.line_tokens: list[tuple[int, int]] = []
        t, n = 0, len(self.spans)
        for k in range(len(self.lines)):
            line_end = self.line_starts[k] + len(self.lines[k])
            first = t
            while t < n and self.spans.offsets[t][0] < line_end:
                t += 1
            self.line_tokens.append((first, t))
        self.out: list[ChunkSpan] = []

    def count(self, first: int, last: int) -> int:
        return self.line_tokens[last][1] - self.line_tokens[first][0]

    def run(self) -> list[ChunkSpan]:
        blank = [first == end for first, end in self.line_tokens]
        blocks = _blocks(self.lines, blank)
        for block in blocks:
            block.tokens = self.count(block.first, block.last)
        current: list[_Block] = []
        tokens = 0
        for block in blocks:
            if block.tokens > self.max:
                self.flush(current)
                current, tokens = [], 0
                self.split_block(block)
                continue
            if current and tokens + block.tokens <= self.max and self.joins(current, block):
                current.append(block)
                tokens += block.tokens
                continue
            self.flush(current)
            current, tokens = [block], block.tokens
        self.flush(current)
        return self.out

    @staticmethod
    def joins(current: list[_Block], block: _Block) -> bool:
        """Same section; or a heading-only chunk followed by one of its subsections."""
        path = current[-1].path
        if block.kind == "text" and block.path == path:
            return True
        only_headings = all(b.kind == "heading" for b in current)
        return only_headings and len(block.path) > len(path) and block.path[: len(path)] == path

    def flush(self, blocks: list[_Block]) -> None:
        if blocks:
            self.emit_lines(blocks[0].first, blocks[-1].last, blocks[-1].path)

    def split_block(self, block: _Block) -> None:
        """Windows of whole lines with about ``overlap`` tokens shared; long lines cut inside."""
        k, last, overlap = block.first, block.last, self.chunker.overlap
        while k <= last:
            if self.count(k, k) > self.max:
                self.split_line(k, block.path)
                k += 1
                continue
            end, tokens = k, 0
            while end <= last and tokens + self.count(end, end) <= self.max:
                tokens += self.count(end, end)
                end += 1
            self.emit_lines(k, end - 1, block.path)
            if end > last:
                break
            nxt, shared = end, 0
            if self.count(end, end) <= self.max:
                while nxt - 1 > k and shared + self.count(nxt - 1, nxt - 1) <= overlap:
                    nxt -= 1
                    shared += self.count(nxt, nxt)
                # Skip back-steps over lines without tokens: they would only repeat blank lines.
                while nxt < end and self.count(nxt, nxt) == 0:
                    nxt += 1
            k = nxt

    def split_line(self, k: int, path: tuple[str, ...]) -> None:
        lo, hi = self.line_tokens[k]
        for a, b in _token_windows(
            self.body, self.spans, lo, hi, self.max, self.chunker.overlap, self.chunker.tokenizer
        ):
            self.emit(a, b, k, k, path)

    def emit_lines(self, first: int, last: int, path: tuple[str, ...]) -> None:
        while first <= last and self.count(first, first) == 0:
            first += 1
        while last >= first and self.count(last, last) == 0:
            last -= 1
        if first > last:
            return
        start = self.line_starts[first]
        last_token_end = self.spans.offsets[self.line_tokens[last][1] - 1][1]
        end = max(self.line_starts[last] + len(self.lines[last].rstrip()), last_token_end)
        self.emit(start, end, first, last, path)

    def emit(self, a: int, b: int, first: int, last: int, path: tuple[str, ...]) -> None:
        offset, base = self.fm.body_offset, self.fm.body_start_line
        self.out.append(
            ChunkSpan(
                text=self.body[a:b],
                start_line=base + first,
                end_line=base + last,
                start_char=offset + a,
                end_char=offset + b,
                headings=list(path),
                index=len(self.out),
            )
        )


def make_chunker(config: ChunkingConfig, tokenizer: Tokenizer | None = None) -> Chunker:
    """The chunker a configuration asks for (``strategy`` = "markdown" or "tokens")."""
    if config.strategy == "markdown":
        return MarkdownChunker(config.max_tokens, config.overlap, tokenizer)
    return TokenWindowChunker(config.max_tokens, config.overlap, tokenizer)
