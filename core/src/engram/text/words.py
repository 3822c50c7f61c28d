"""Words for keyword search: the one tokenizer that the reference store, the keyword indexes of
other backends (LanceDB, Chroma) and hybrid search all share, so they agree on what a word is."""

from __future__ import annotations

import re
import unicodedata
from functools import cache

# CJK scripts write words without spaces: each of their characters is a token of its own.
_CJK = (
    "\u1100-\u11ff"  # Hangul Jamo
    "\u2e80-\u2fdf"  # CJK radicals, Kangxi radicals
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3130-\u318f"  # Hangul compatibility Jamo
    "\u31f0-\u31ff"  # Katakana phonetic extensions
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uac00-\ud7af"  # Hangul syllables
    "\uf900-\ufaff"  # CJK compatibility ideographs
    "\U00020000-\U0003134f"  # CJK extensions B-G
)


@cache
def _word_pattern() -> re.Pattern[str]:
    """Letters and digits, plus the combining marks that many scripts (Devanagari, Thai, Arabic
    vowel signs) need inside a word; built on first use from the running Unicode tables."""
    marks: list[str] = []
    start: int | None = None
    for code in range(0x20000):
        is_mark = unicodedata.category(chr(code)).startswith("M")
        if is_mark and start is None:
            start = code
        elif not is_mark and start is not None:
            marks.append(f"{_escape(start)}-{_escape(code - 1)}")
            start = None
    word = f"[^\\W_{_CJK}]"
    return re.compile(f"[{_CJK}]|{word}(?:{word}|[{''.join(marks)}])*")


def _escape(code: int) -> str:
    return f"\\U{code:08x}"


def tokenize(text: str) -> list[str]:
    """Words of ``text`` for keyword search: NFKC-normalised, lowercased runs of letters, digits
    and combining marks (underscore and punctuation separate words); CJK characters (Han, kana,
    Hangul) are one token each, since those scripts do not separate words with spaces."""
    return _word_pattern().findall(unicodedata.normalize("NFKC", text).lower())
