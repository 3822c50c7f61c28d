"""Token counting for chunk sizes and recall budgets, fully offline.

The vocabulary is the WordPiece tokenizer of all-MiniLM-L6-v2 / bert-base-uncased, shipped inside
the package (``engram/_data``), so counting never downloads anything (unlike tiktoken, which
fetches its tables at run time). Counts are close to what most embedding models see.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tokenizers import Encoding
from tokenizers import Tokenizer as _HFTokenizer

from engram.errors import ConfigError

_BUNDLED = "wordpiece-uncased.json"
# Lone surrogates (files read with errors="surrogateescape") cannot cross into Rust; each becomes
# U+FFFD, one character for one, so offsets still point into the original text.
_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True, slots=True)
class TokenSpans:
    """Tokens of a text as character spans in the original text, plus the word each belongs to.

    ``words[i]`` is the index of the pre-tokenizer word that token ``i`` is part of: tokens of one
    word (``una`` ``##ffa`` ``##ble``) share it, so cutting between them splits a word.
    """

    offsets: list[tuple[int, int]]
    words: list[int]

    def __len__(self) -> int:
        return len(self.offsets)


@functools.cache
def _load(path: str) -> _HFTokenizer:
    """Read a tokenizer.json once per process; padding and truncation are switched off."""
    try:
        tokenizer = _HFTokenizer.from_file(path)
    except Exception as exc:  # tokenizers raises plain Exception for unreadable files
        raise ConfigError(
            f"cannot load tokenizer file {path}: {exc}; reinstall engram or pass a valid "
            "tokenizer.json"
        ) from None
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


@functools.cache
def _bundled_path() -> str:
    return str(resources.files("engram") / "_data" / _BUNDLED)


class Tokenizer:
    """Counts tokens and maps them back to character spans. Special tokens are never added.

    Loading is lazy: constructing a ``Tokenizer`` costs nothing until the first count.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        self._path = str(path) if path is not None else None
        self._loaded: _HFTokenizer | None = None

    @property
    def _hf(self) -> _HFTokenizer:
        if self._loaded is None:
            self._loaded = _load(self._path if self._path is not None else _bundled_path())
        return self._loaded

    def count(self, text: str) -> int:
        """Number of tokens in ``text``."""
        if not text:
            return 0
        return len(self._encode(text).ids)

    def count_many(self, texts: list[str]) -> list[int]:
        """Token counts of many texts in one (parallel) call."""
        if not texts:
            return []
        clean = [_SURROGATE.sub("\ufffd", t) for t in texts]
        encodings = self._hf.encode_batch(clean, add_special_tokens=False)
        return [len(e.ids) for e in encodings]

    def encode_with_offsets(self, text: str) -> list[tuple[int, int]]:
        """Character span ``(start, end)`` in ``text`` of each token, in order."""
        return self.spans(text).offsets

    def spans(self, text: str) -> TokenSpans:
        """Token spans plus word membership, for cutting text at token boundaries."""
        if not text:
            return TokenSpans([], [])
        encoding = self._encode(text)
        given = encoding.word_ids  # fresh lists from the Rust side: offsets are int pairs
        words = [w if w is not None else -1 - i for i, w in enumerate(given)]
        return TokenSpans(encoding.offsets, words)

    def _encode(self, text: str) -> Encoding:
        try:
            return self._hf.encode(text, add_special_tokens=False)
        except TypeError:
            return self._hf.encode(_SURROGATE.sub("\ufffd", text), add_special_tokens=False)


@functools.cache
def default_tokenizer() -> Tokenizer:
    """The process-wide tokenizer over the bundled WordPiece vocabulary."""
    return Tokenizer()
