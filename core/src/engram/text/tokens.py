"""Token counting for chunk sizes and recall budgets, fully offline.

The vocabulary is the WordPiece tokenizer of all-MiniLM-L6-v2 / bert-base-uncased, shipped inside
the package (``engram/_data``), so counting never downloads anything (unlike tiktoken, which
fetches its tables at run time). Counts are close to what most embedding models see.
"""

from __future__ import annotations

import functools
import re
import threading
from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tokenizers import Encoding
from tokenizers import Tokenizer as _HFTokenizer
from tokenizers.models import WordPiece
from tokenizers.normalizers import BertNormalizer
from tokenizers.pre_tokenizers import BertPreTokenizer

from engram.errors import ConfigError

_BUNDLED = "wordpiece-uncased.json"
# Lone surrogates (files read with errors="surrogateescape") cannot cross into Rust; each becomes
# U+FFFD, one character for one, so offsets still point into the original text.
_SURROGATE = re.compile("[\ud800-\udfff]")
WORDS_KEPT = 65_536  # words whose token counts a tokenizer remembers (a few MB at most)
# BERT's pre-tokenizer on printable ASCII: a run of anything but whitespace and punctuation, or
# one punctuation mark (its punctuation is every ASCII one: !-/ :-@ [-` {-~).
_BERT_WORD = re.compile(r"[^\s!-/:-@\[-`{-~]+|[!-/:-@\[-`{-~]")
# ASCII its normalizer removes (controls but tab, newline, CR), which would join words.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


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
        self._bert: bool | None = None  # known once loaded (``_bert_words``)
        self._lower = False
        self._words: dict[str, int] = {}  # word -> its token count, the newest WORDS_KEPT
        self._words_lock = threading.Lock()

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

    def line_counts(self, lines: Sequence[str]) -> list[tuple[int, int]]:
        """For each line (text without a newline): its token count and where its last token
        ends (0 without one), as the tokens of the lines joined by newlines say: a token
        belongs to the line it starts in.

        With a BERT tokenizer (the bundled one) a line of printable ASCII is split into words
        as its pre-tokenizer does (whitespace apart, each punctuation mark alone) and each word
        costs what the tokenizer said of it before; only new words and other lines reach it."""
        if not self._bert_words:
            return self._count_lines(list(lines))
        out: list[tuple[int, int]] = []
        others: list[int] = []
        unseen: list[tuple[int, list[str]]] = []  # lines with a word not remembered yet
        for i, line in enumerate(lines):
            if line.isascii() and _CONTROL.search(line) is None:
                got = self._plain_line(line)
                if isinstance(got, list):
                    unseen.append((i, got))
                    got = (0, 0)
                out.append(got)
            else:
                out.append((0, 0))
                others.append(i)
        if unseen:  # every new word of the document in one call
            fresh = self._remember_all([w for _, words in unseen for w in words])
            known = self._words
            for i, words in unseen:
                tokens = sum(fresh.get(w) or known.get(w) or self._remember(w) for w in words)
                out[i] = (tokens, len(lines[i].rstrip()))
        if others:
            counted = self._count_lines([lines[i] for i in others])
            for i, got in zip(others, counted, strict=True):
                out[i] = got
        return out

    @property
    def _bert_words(self) -> bool:
        """Whether this tokenizer is BERT's pipeline, whose ASCII words ``_plain_line`` finds."""
        if self._bert is None:
            hf = self._hf
            self._bert = (
                isinstance(hf.normalizer, BertNormalizer)
                and isinstance(hf.pre_tokenizer, BertPreTokenizer)
                and isinstance(hf.model, WordPiece)
            )
            self._lower = self._bert and bool(hf.normalizer.lowercase)
        return self._bert

    def _plain_line(self, line: str) -> tuple[int, int] | list[str]:
        """``line_counts`` of one line of printable ASCII (tabs and CR allowed), by words: the
        last token ends where the last word does, before the trailing whitespace. Its words
        instead when one is not remembered yet (``line_counts`` asks for them all at once)."""
        words = _BERT_WORD.findall(line.lower() if self._lower else line)
        if not words:
            return 0, 0
        try:
            tokens = sum(map(self._words.__getitem__, words))
        except KeyError:
            return words
        return tokens, len(line.rstrip())

    def _remember_all(self, words: list[str]) -> dict[str, int]:
        """The token counts of the words not remembered yet among ``words``, from ONE encoding
        of them joined by spaces (a call per word cost ~6 us each: a note's first edit in a
        process meets a hundred): each is one pre-tokenizer word, cut by WordPiece alone, so
        its tokens are those it has alone (``word_ids`` says which are whose)."""
        new = [w for w in dict.fromkeys(words) if w not in self._words]
        if not new:
            return {}
        counts = dict.fromkeys(new, 0)
        order = list(counts)
        for word in self._encode(" ".join(new)).word_ids:
            if word is not None:
                counts[order[word]] += 1
        with self._words_lock:
            self._words.update(counts)
            while len(self._words) > WORDS_KEPT:
                del self._words[next(iter(self._words))]  # the oldest first
        return counts

    def _remember(self, word: str) -> int:
        pieces = len(self._encode(word).ids)
        with self._words_lock:
            self._words[word] = pieces
            while len(self._words) > WORDS_KEPT:
                del self._words[next(iter(self._words))]  # the oldest first
        return pieces

    def _count_lines(self, lines: list[str]) -> list[tuple[int, int]]:
        """``line_counts`` of ``lines`` from one encoding of them joined by newlines."""
        joined = "\n".join(lines)
        offsets = self._encode(joined).offsets if joined else []
        starts = [a for a, _ in offsets]
        out: list[tuple[int, int]] = []
        t = begin = 0
        for line in lines:
            end = bisect_left(starts, begin + len(line), t)
            out.append((end - t, offsets[end - 1][1] - begin if end > t else 0))
            t, begin = end, begin + len(line) + 1
        return out

    def _encode(self, text: str) -> Encoding:
        try:
            return self._hf.encode(text, add_special_tokens=False)
        except TypeError:
            return self._hf.encode(_SURROGATE.sub("\ufffd", text), add_special_tokens=False)


@functools.cache
def default_tokenizer() -> Tokenizer:
    """The process-wide tokenizer over the bundled WordPiece vocabulary."""
    return Tokenizer()
