"""The part of a hit worth showing: the sentence that matches the query, not the chunk's first
characters (a note's heading and opening lines rarely hold the answer)."""

from __future__ import annotations

import re

from engram.text.words import tokenize

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
ELLIPSIS = "…"


def snippet(text: str, query: str, limit: int) -> str:
    """At most ``limit`` characters of ``text`` (whitespace flattened): all of it when it fits,
    else from the sentence that holds the most query words (the first of equals) on, with "…"
    where text was left out. No query word anywhere: the start, as before."""
    flat = " ".join(text.split())
    if len(flat) <= limit:
        return flat
    wanted = set(tokenize(query))
    sentences = _SENTENCE_END.split(flat)
    scores = [len(wanted & set(tokenize(s))) for s in sentences]
    best = max(range(len(sentences)), key=lambda i: (scores[i], -i))
    if not wanted or scores[best] == 0 or best == 0:
        return _cut(flat, limit)
    start = flat.index(sentences[best], sum(len(s) for s in sentences[:best]))
    return _cut(ELLIPSIS + flat[start:], limit)


def _cut(text: str, limit: int) -> str:
    """``text`` within ``limit`` characters, ending in "…" if it had to be cut."""
    if len(text) <= limit:
        return text
    return text[: limit - 1] + ELLIPSIS
