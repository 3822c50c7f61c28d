"""Split documents into chunks small enough to embed, remembering exactly where each came from.

Two chunkers share one cutting rule: text is cut at token boundaries reported by the tokenizer and,
whenever possible, between words, so every chunk's own token count stays within ``max_tokens``
and its text is an exact slice of the source (``source[start_char:end_char]``). Line numbers are
1-based and count every line of the original file, frontmatter included, so a hit can point an
editor at the right place.

Modules: ``spans`` (what a chunker returns, chunk ids), ``frontmatter``, ``windows`` (the
token-window chunker and the shared cutting rule), ``markdown`` (the markdown chunker). Import
the names below from ``engram.chunking``.
"""

from __future__ import annotations

from engram.chunking.frontmatter import (
    Frontmatter,
    FrontmatterWarning,
    parse_frontmatter,
    read_frontmatter,
)
from engram.chunking.markdown import MarkdownChunker
from engram.chunking.spans import (
    CHUNK_ID_LENGTH,
    ChunkedDocument,
    Chunker,
    ChunkSpan,
    chunk_id,
    chunk_ids,
)
from engram.chunking.windows import TokenWindowChunker
from engram.config import ChunkingConfig
from engram.text.tokens import Tokenizer

__all__ = [
    "CHUNK_ID_LENGTH",
    "ChunkSpan",
    "ChunkedDocument",
    "Chunker",
    "Frontmatter",
    "FrontmatterWarning",
    "MarkdownChunker",
    "TokenWindowChunker",
    "chunk_id",
    "chunk_ids",
    "make_chunker",
    "parse_frontmatter",
    "read_frontmatter",
]


def make_chunker(config: ChunkingConfig, tokenizer: Tokenizer | None = None) -> Chunker:
    """The chunker a configuration asks for (``strategy`` = "markdown" or "tokens")."""
    if config.strategy == "markdown":
        return MarkdownChunker(config.max_tokens, config.overlap, tokenizer)
    return TokenWindowChunker(config.max_tokens, config.overlap, tokenizer)
