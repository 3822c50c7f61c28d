"""``tsvector_text`` against a plain reference: the same lexemes and positions, PostgreSQL's
limits kept (lexeme bytes, positions per lexeme, the largest position)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engram import tokenize
from engram_postgres.words import (
    MAX_LEXEME_BYTES,
    MAX_POSITION,
    MAX_POSITIONS,
    quote,
    tsvector_text,
)


def reference(text: str) -> str:
    """The straightforward version: every word's capped positions, sorted and unique."""
    positions: dict[str, list[int]] = {}
    for at, word in enumerate(tokenize(text), start=1):
        if len(word.encode("utf-8")) > MAX_LEXEME_BYTES:
            continue
        kept = positions.setdefault(word, [])
        if len(kept) < MAX_POSITIONS:
            kept.append(min(at, MAX_POSITION))
    return " ".join(
        f"{quote(w)}:{','.join(str(p) for p in sorted(set(places)))}"
        for w, places in positions.items()
    )


PIECES = st.sampled_from(
    ["a", "b", " ", "'", "\\", "é", "中文", "pg_ctl", "x", "\x00", "w" * 600, "é" * 520, "😀" * 512]
)


@settings(max_examples=500, deadline=None)
@given(st.lists(PIECES, max_size=120).map("".join))
def test_tsvector_text_equals_the_reference(text: str) -> None:
    assert tsvector_text(text) == reference(text)


def test_positions_past_the_limits_are_capped_and_counted_as_postgresql_keeps_them() -> None:
    many = " ".join(["a b c"] * 9000)  # 27,000 words: positions past 16,383, > 256 per word
    assert tsvector_text(many) == reference(many)
    late = " ".join(f"w{i}" for i in range(17000))  # words first seen past the last position
    out = tsvector_text(late)
    assert out == reference(late)
    assert out.endswith(f"'w16999':{MAX_POSITION}")


def test_quote_escapes_quotes_and_backslashes() -> None:
    assert quote("plain") == "'plain'"
    assert quote("it's") == "'it''s'"
    assert quote("a\\b") == "'a\\\\b'"
