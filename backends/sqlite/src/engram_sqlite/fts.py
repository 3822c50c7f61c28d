"""Keyword search text handling: what FTS5 indexes, and how a user's raw query becomes FTS5 syntax.

The FTS5 table uses ``porter unicode61 remove_diacritics 2`` with combining marks counted as
word characters (so Hindi or Thai words are not cut at their vowel signs). Two things unicode61
cannot do are handled here, identically for indexed text and for queries:

- Scripts written without spaces (Chinese, Japanese, Korean, Thai, Lao, Khmer, Myanmar) would
  become one giant token per run. Each of their characters is made a token of its own; a query run
  becomes a phrase of those tokens, so any substring matches (also 1- and 2-character words, which
  a trigram tokenizer cannot find).
- Arabic harakat and Hebrew points (which ``remove_diacritics`` leaves alone) are dropped, so a
  query without vowel marks finds vocalised text and the reverse.

``index_text`` must stay deterministic: the contentless FTS table is told what to forget by
re-running it on the old text. Changing it requires a migration that rebuilds the FTS table.
"""

from __future__ import annotations

import re

from engram_sqlite.unicode61 import SEPARATOR_RANGES

TOKENIZER = "porter unicode61 remove_diacritics 2 categories 'L* N* Co M*'"
MAX_QUERY_TERMS = 256
MAX_REPEATS = 8

_NO_SPACE_SCRIPTS = (
    "\u0e00-\u0e7f"  # Thai
    "\u0e80-\u0eff"  # Lao
    "\u1000-\u109f"  # Myanmar
    "\u1100-\u11ff"  # Hangul Jamo
    "\u1780-\u17ff"  # Khmer
    "\u2e80-\u2fdf"  # CJK and Kangxi radicals
    "\u3005-\u3007\u3021-\u3029\u3038-\u303c"  # ideographic marks and numerals
    "\u3040-\u31ff"  # Hiragana, Katakana, Bopomofo, Hangul compatibility Jamo, Kanbun
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\ua960-\ua97f"  # Hangul Jamo extended A
    "\uac00-\ud7ff"  # Hangul syllables, Jamo extended B
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\uff66-\uffdc"  # half-width Katakana and Hangul
    "\U00020000-\U0003134f"  # CJK extensions B-G
)
_SPLIT = re.compile(f"([{_NO_SPACE_SCRIPTS}])")
_WORD = re.compile(
    "[^" + "".join(f"\\U{first:08x}-\\U{last:08x}" for first, last in SEPARATOR_RANGES) + "]+"
)
_VOWEL_MARKS = re.compile("[\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7\u064b-\u065f\u0670]")


def index_text(text: str | bytes) -> str:
    """The text FTS5 tokenises for a chunk (the SQL function ``engram_fts_text``, which is given
    UTF-8 bytes so that text after a NUL is not lost). NUL becomes a space, as FTS5 would."""
    if isinstance(text, bytes):
        text = text.decode("utf-8", errors="replace")
    if text.isascii():  # no spaceless script, no vowel mark: the common case, 50x faster
        return text.replace("\x00", " ")
    return _SPLIT.sub(r" \1 ", _VOWEL_MARKS.sub("", text.replace("\x00", " ")))


def match_expression(query: str) -> str | None:
    """A user's raw text as an FTS5 query: every word a quoted phrase, OR-joined
    (``match_phrases``). None when no word is left."""
    return " OR ".join(match_phrases(query)) or None


def match_phrases(query: str) -> list[str]:
    """A user's raw text as FTS5 phrases, one quoted phrase per word, repeats kept.

    Words are split exactly where the tokenizer splits (``unicode61.SEPARATOR_RANGES``). Nothing
    the user typed is FTS5 syntax: operators, quotes, ``*``, ``^``, ``:`` and parentheses are
    separators, and ``AND``/``OR``/``NOT``/``NEAR`` are plain words. A word the query repeats is
    repeated in the expression (up to ``MAX_REPEATS`` times): ``bm25()`` sums over the query's
    phrases, so the word keeps the weight BM25 gives a repeated query term, as in Lucene and
    Anserini (merging repeats cost 0.05 nDCG@10 on long queries). Only the first
    ``MAX_QUERY_TERMS`` distinct words count.
    """
    counts: dict[str, list[str | int]] = {}  # folded word -> [its first spelling, times]
    for word in _WORD.findall(query):
        tokens = index_text(word).split()
        if not tokens:
            continue
        phrase = '"' + " ".join(tokens).replace('"', '""') + '"'
        seen = counts.get(phrase.lower())
        if seen is not None:
            seen[1] = min(MAX_REPEATS, int(seen[1]) + 1)
        elif len(counts) < MAX_QUERY_TERMS:
            counts[phrase.lower()] = [phrase, 1]
    return [str(p) for p, n in counts.values() for _ in range(int(n))]
