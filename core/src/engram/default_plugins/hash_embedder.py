"""``HashEmbedder``: a deterministic, offline embedder by feature hashing (no model, no network).

Features of a text: its words (``engram.search.tokenize``: lowercased letters/digits, CJK per
character) with weight 1, and each word's character trigrams (padded with ``<`` and ``>``, so
``cat`` gives ``<ca``, ``cat``, ``at>``) with weight 0.5. Repeated features grow as
``1 + log(count)``. Each feature is hashed with BLAKE2b (stable across processes and machines,
unlike Python's salted ``hash()``) to a bucket and a sign; the sum is scaled to length 1.

A text without words (empty, punctuation only) gets one fixed unit vector, so every output has
length 1 and cosine similarity is always defined.

Texts sharing words or spellings get a higher cosine than unrelated texts: good enough for tests,
demos and a zero-setup default, not a replacement for a semantic model.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from functools import lru_cache

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict, Field

from engram.embedding.base import BaseEmbedder
from engram.hookspecs import hookimpl
from engram.models import InputType
from engram.registry import Register
from engram.text.words import tokenize

MODEL = "feature-hash-v1"
WORD_WEIGHT = 1.0
TRIGRAM_WEIGHT = 0.5
EMPTY_FEATURE = "\x00empty"


class HashEmbedderOptions(BaseModel):
    """Options of the ``hash`` embedder."""

    model_config = ConfigDict(extra="forbid")

    dimension: int = Field(default=256, ge=8, le=8192)


class HashEmbedder(BaseEmbedder):
    """Feature-hashing embedder; symmetric (``input_type`` is ignored)."""

    name = "hash"
    model = MODEL
    max_batch = 1024

    def __init__(self, options: HashEmbedderOptions | None = None) -> None:
        self.options = options if options is not None else HashEmbedderOptions()
        self.dimension = self.options.dimension

    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        rows: list[list[float]] = [self._vector(text).tolist() for text in texts]
        return rows

    def _vector(self, text: str) -> npt.NDArray[np.float64]:
        vector = np.zeros(self.dimension, dtype=np.float64)
        for feature, weight in features(text).items():
            bucket, sign = _slot(feature, self.dimension)
            vector[bucket] += sign * weight
        norm = float(np.linalg.norm(vector))
        if norm == 0.0:
            # No words, or every feature cancelled out: the fixed vector keeps cosine defined.
            bucket, sign = _slot(EMPTY_FEATURE, self.dimension)
            vector[bucket] = sign
            return vector
        unit: npt.NDArray[np.float64] = vector / norm
        return unit


def features(text: str) -> dict[str, float]:
    """Weighted features of ``text``: ``w:<word>`` and ``c:<trigram>`` → weight."""
    counts: Counter[str] = Counter()
    for word in tokenize(text):
        counts["w:" + word] += 1
        padded = f"<{word}>"
        for i in range(len(padded) - 2):
            counts["c:" + padded[i : i + 3]] += 1
    return {
        feature: (WORD_WEIGHT if feature[0] == "w" else TRIGRAM_WEIGHT) * (1.0 + math.log(count))
        for feature, count in counts.items()
    }


@lru_cache(maxsize=65536)
def _slot(feature: str, dimension: int) -> tuple[int, float]:
    """Bucket and sign of a feature, from a stable 64-bit BLAKE2b digest."""
    digest = int.from_bytes(
        hashlib.blake2b(feature.encode("utf-8"), digest_size=8).digest(), "little"
    )
    return digest % dimension, (1.0 if digest >> 63 == 0 else -1.0)


@hookimpl
def register_embedders(register: Register) -> None:
    """The built-in ``hash`` embedder."""
    register("hash", HashEmbedder, options=HashEmbedderOptions)
