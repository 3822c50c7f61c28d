"""What a memory's text says, as the offline judge compares it: its words (stemmed), its polarity,
and the values, identifiers, paths and names in it.

Two texts state the same fact only when all of these agree; one that differs is a reason to keep
both (a number, an identifier, a name) or a sign of a reversal (polarity, an antonym).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

from engram.memories.judge.lexicon import FUNCTION_WORDS, NEGATIONS, NUMBER_WORDS, SYNONYM_GROUPS

_TOKEN = re.compile(r"[A-Za-z0-9_~$][\w.+#/:@~$-]*[\w#+/]|[A-Za-z0-9]")
_NOT = re.compile(r"n't\b|\bcannot\b", re.IGNORECASE)
_MULTI_NEGATION = re.compile(r"\bno (?:longer|more)\b", re.IGNORECASE)
_NO_ONE = re.compile(r"\bno[- ]one\b", re.IGNORECASE)  # read as "nobody" (a negation word)
_SENTENCE_BREAK = re.compile(r"[.!?:\n]")
_HAS_DIGIT = re.compile(r"\d")
_HAS_ALPHA = re.compile(r"[A-Za-z]")
_VERSION = re.compile(r"^v?\d+(?:\.\d+)+$|^v\d+$", re.IGNORECASE)
_PATH = re.compile(r"/|\\|^~|^\.\w|\w\.(?:py|md|toml|json|ya?ml|txt|ini|cfg|js|ts|sh|env|lock)$")


@cache
def _stemmer() -> Any:
    """Built on first use: snowballstemmer imports every language it knows (~0.2 s), and only
    the write path (the judge) stems; a recall or a search must not pay for it."""
    import snowballstemmer

    return snowballstemmer.stemmer("english")


@cache
def _synonyms() -> dict[str, str]:
    out: dict[str, str] = {}
    for group in SYNONYM_GROUPS:
        stems = [stem(w) for w in group]
        out.update(dict.fromkeys(stems, stems[0]))
    return out


@lru_cache(maxsize=8192)
def stem(word: str) -> str:
    return str(_stemmer().stemWord(word))


@dataclass(frozen=True, slots=True)
class Token:
    """One word of a text: as written, lowercased, and its stem."""

    text: str
    lower: str
    stem: str
    first: bool  # the first word of a sentence (a capital there names nothing)


@dataclass(frozen=True)
class Reading:
    """A text as the judge compares it (see the module docstring)."""

    tokens: tuple[Token, ...]
    negations: int
    content: frozenset[str]  # stems of the words that carry meaning, values left out
    words: frozenset[str]  # every lowercased word
    values: frozenset[str]  # numbers, versions, dates (number words read as digits)
    identifiers: frozenset[str]  # letters and digits together: INV-2024-0042, alpha110, h110
    paths: frozenset[str]
    names: frozenset[str]  # capitalised words inside a sentence: proper nouns

    @property
    def negated(self) -> bool:
        return self.negations % 2 == 1


@lru_cache(maxsize=4096)
def read(text: str) -> Reading:
    """Read ``text`` (cached: a candidate is read once per write)."""
    plain = _NOT.sub(" not", text)
    negations = len(_MULTI_NEGATION.findall(plain))
    plain = _NO_ONE.sub("nobody", _MULTI_NEGATION.sub(" ", plain))
    tokens: list[Token] = []
    end = 0
    for match in _TOKEN.finditer(plain):
        raw = match.group().rstrip(".:")
        if not raw:
            continue
        # A sentence starts after . ! ? : or a line break (a heading, a list item).
        first = end == 0 or bool(_SENTENCE_BREAK.search(plain, end, match.start()))
        lower = raw.casefold()
        tokens.append(Token(raw, lower, stem(lower), first))
        end = match.end()
    negations += sum(
        1 for i, t in enumerate(tokens) if t.lower in NEGATIONS and not _in_name(tokens, i)
    )
    values: set[str] = set()
    identifiers: set[str] = set()
    paths: set[str] = set()
    names: set[str] = set()
    content: set[str] = set()
    for token in tokens:
        lower = token.lower
        if _PATH.search(token.text) and len(token.text) > 2:
            paths.add(lower)
        elif lower in NUMBER_WORDS:
            values.add(NUMBER_WORDS[lower])
        elif _HAS_DIGIT.search(lower):
            is_id = _HAS_ALPHA.search(lower) and not _VERSION.match(lower)
            (identifiers if is_id else values).add(lower.lstrip("v"))
        elif lower not in FUNCTION_WORDS and lower not in NEGATIONS:
            content.add(_synonyms().get(token.stem, token.stem))
            if token.text[0].isupper() and not token.first and lower != "i":
                names.add(token.stem)
    return Reading(
        tokens=tuple(tokens),
        negations=negations,
        content=frozenset(content),
        words=frozenset(t.lower for t in tokens),
        values=frozenset(values),
        identifiers=frozenset(identifiers),
        paths=frozenset(paths),
        names=frozenset(names),
    )


def _in_name(tokens: list[Token], i: int) -> bool:
    """A capitalised word that continues a name is part of it: "Bane NOR" owns a railway, it
    negates nothing ("I do NOT like it" and a sentence's first "Not" still negate)."""
    token = tokens[i]
    if i == 0 or token.first or not token.text[:1].isupper():
        return False
    before = tokens[i - 1].text
    return before[:1].isupper() and before != "I"
