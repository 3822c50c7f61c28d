"""Keyword search in PostgreSQL full-text terms, with engram's own tokenizer.

PostgreSQL's parsers do not agree with engram on what a word is (CJK text is not segmented, and
``pg_ctl`` is split differently), and engram's keyword contract is "any word matches". So the
store writes each chunk's ``tsvector`` from ``engram.tokenize`` (lexemes as-is, with positions)
and searches with an OR of the query's words as a ``tsquery``. Both travel as bound parameters
cast by PostgreSQL's ``tsvector`` / ``tsquery`` input functions, each lexeme quoted and escaped
for them: user text never reaches SQL, and never acts as tsquery syntax.
"""

from __future__ import annotations

from engram import tokenize

# PostgreSQL's limits: a lexeme is at most 2047 bytes, a position at most 16383, and at most
# 256 positions are kept per lexeme.
MAX_LEXEME_BYTES = 2047
MAX_POSITION = 16383
MAX_POSITIONS = 256


def quote(lexeme: str) -> str:
    """A lexeme as tsvector/tsquery input: single-quoted, quotes doubled, backslashes escaped."""
    if "'" not in lexeme and "\\" not in lexeme:
        return "'" + lexeme + "'"
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _fits(word: str) -> bool:
    # A UTF-8 character is at most 4 bytes: a word of up to 511 characters always fits.
    return len(word) <= MAX_LEXEME_BYTES // 4 or len(word.encode("utf-8")) <= MAX_LEXEME_BYTES


def tsvector_text(text: str) -> str:
    """``text``'s words with their positions, as tsvector input (empty for no words).

    Written for every chunk of every write, so kept lean (it was half of an upsert's time):
    positions arrive in increasing order, so they need sorting and de-duplicating only when
    some were capped at ``MAX_POSITION``."""
    positions: dict[str, list[int]] = {}
    for at, word in enumerate(tokenize(text), start=1):
        kept = positions.get(word)
        if kept is None:
            if _fits(word):
                positions[word] = [at]
        elif len(kept) < MAX_POSITIONS:
            kept.append(at)
    parts = []
    for word, places in positions.items():
        if places[-1] > MAX_POSITION:
            places = sorted({min(p, MAX_POSITION) for p in places})
        parts.append(f"{quote(word)}:{','.join(map(str, places))}")
    return " ".join(parts)


def tsquery_text(query: str) -> str | None:
    """The OR of ``query``'s words as tsquery input, or None when it has no words."""
    words = sorted({w for w in tokenize(query) if _fits(w)})
    if not words:
        return None
    return " | ".join(quote(w) for w in words)
