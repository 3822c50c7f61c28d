"""The token-window chunker, and the cutting rule both chunkers share: windows of whole words
within ``max_tokens``, consecutive windows sharing about ``overlap`` tokens."""

from __future__ import annotations

import bisect
import re

from engram.chunking.frontmatter import read_frontmatter
from engram.chunking.spans import ChunkedDocument, ChunkSpan
from engram.errors import ConfigError
from engram.text.tokens import Tokenizer, TokenSpans, default_tokenizer


def check_sizes(max_tokens: int, overlap: int) -> None:
    """Refuse sizes no chunker can honour, with the fix in the message."""
    if max_tokens < 1:
        raise ConfigError(f"chunking max_tokens must be at least 1, got {max_tokens}; raise it")
    if not 0 <= overlap < max_tokens:
        raise ConfigError(
            f"chunking overlap must be between 0 and max_tokens - 1 ({max_tokens - 1}), got "
            f"{overlap}; lower the overlap or raise max_tokens"
        )


def token_windows(
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
        check_sizes(max_tokens, overlap)
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
        ranges = token_windows(
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
