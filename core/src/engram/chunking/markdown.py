"""The markdown chunker: sections follow the ATX headings, blocks (paragraphs, fenced code) are
packed up to the token budget, and only what is too long is cut into windows."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from engram.chunking.frontmatter import Frontmatter, read_frontmatter
from engram.chunking.spans import ChunkedDocument, ChunkSpan
from engram.chunking.windows import check_sizes, token_windows
from engram.text.tokens import Tokenizer, default_tokenizer

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
        check_sizes(max_tokens, overlap)
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
        # Tokens never cross a newline (it is whitespace), so each line owns a token range,
        # counted line by line (the tokenizer remembers lines: an edit costs only its new ones).
        counts = chunker.tokenizer.line_counts(self.lines)
        self.last_token_ends = [end for _, end in counts]  # within the line
        self.line_tokens: list[tuple[int, int]] = []
        t = 0
        for tokens, _ in counts:
            self.line_tokens.append((t, t + tokens))
            t += tokens
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
        line, start = self.lines[k], self.line_starts[k]
        spans = self.chunker.tokenizer.spans(line)
        tokenizer, overlap = self.chunker.tokenizer, self.chunker.overlap
        for a, b in token_windows(line, spans, 0, len(spans), self.max, overlap, tokenizer):
            self.emit(start + a, start + b, k, k, path)

    def emit_lines(self, first: int, last: int, path: tuple[str, ...]) -> None:
        while first <= last and self.count(first, first) == 0:
            first += 1
        while last >= first and self.count(last, last) == 0:
            last -= 1
        if first > last:
            return
        start = self.line_starts[first]
        line_start = self.line_starts[last]
        end = line_start + max(len(self.lines[last].rstrip()), self.last_token_ends[last])
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
