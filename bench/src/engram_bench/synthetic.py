"""A deterministic synthetic corpus for the speed runs: clustered unit vectors and Zipf-like text.

Built in blocks of ``BLOCK`` rows, each from its own seed, so the first 10,000 rows of the
100,000-row corpus are the 10,000-row corpus and any scale can be made without the others.

- Vectors: ``CLUSTERS`` random unit centres; a row is a centre plus Gaussian noise of about the
  centre's length, scaled to length 1 (cosine ≈ 0.5 within a cluster, ≈ 0 across), closer to real
  embeddings than uniform noise, which makes every neighbour equally far and ANN look bad.
- Text: 30-90 pseudo-words drawn from a ``VOCABULARY``-word list with Zipf weights, so keyword
  queries meet posting lists of realistic lengths.
- Queries: a corpus row plus a little noise (there is a true near neighbour), and three words of
  middle frequency.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np
import numpy.typing as npt

from engram.models import IndexIdentity

BLOCK = 10_000
CLUSTERS = 256
VOCABULARY = 20_000
NOISE = 0.05
QUERY_NOISE = 0.02
SEED = 20240601
_SYLLABLES = [c + v for c in "bcdfghklmnprstvz" for v in "aeiou"] + ["th", "st", "qu", "ch"]

Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Corpus:
    vectors: Matrix  # (n, dim) float32, unit rows
    texts: list[str]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class QuerySet:
    vectors: Matrix
    texts: list[str]


@cache
def vocabulary() -> tuple[str, ...]:
    """``VOCABULARY`` distinct pseudo-words, most frequent first."""
    rng = np.random.default_rng(SEED)
    words: dict[str, None] = {}
    while len(words) < VOCABULARY:
        length = int(rng.integers(1, 5))
        words.setdefault("".join(_SYLLABLES[i] for i in rng.integers(0, len(_SYLLABLES), length)))
    return tuple(words)


@cache
def _zipf() -> npt.NDArray[np.float64]:
    weights = 1.0 / (np.arange(VOCABULARY) + 10.0)
    cumulative: npt.NDArray[np.float64] = np.cumsum(weights / weights.sum())
    return cumulative


@cache
def _centres(dim: int) -> Matrix:
    rng = np.random.default_rng([SEED, dim, 0])
    centres = rng.standard_normal((CLUSTERS, dim)).astype(np.float32)
    unit: Matrix = centres / np.linalg.norm(centres, axis=1, keepdims=True)
    return unit


def _block_vectors(block: int, rows: int, dim: int) -> Matrix:
    rng = np.random.default_rng([SEED, dim, 1, block])
    which = rng.integers(0, CLUSTERS, rows)
    noisy = _centres(dim)[which] + rng.standard_normal((rows, dim)).astype(np.float32) * NOISE
    unit: Matrix = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    return unit


def _block_texts(block: int, rows: int) -> list[str]:
    rng = np.random.default_rng([SEED, 2, block])
    words = vocabulary()
    lengths = rng.integers(30, 91, rows)
    picks = np.searchsorted(_zipf(), rng.random(int(lengths.sum())))
    picks = np.minimum(picks, VOCABULARY - 1)
    out: list[str] = []
    start = 0
    for length in lengths.tolist():
        out.append(" ".join(words[i] for i in picks[start : start + length]))
        start += length
    return out


def corpus(rows: int, dim: int = 384) -> Corpus:
    """The first ``rows`` rows of the synthetic corpus."""
    vectors: list[Matrix] = []
    texts: list[str] = []
    for block in range((rows + BLOCK - 1) // BLOCK):
        size = min(BLOCK, rows - block * BLOCK)
        vectors.append(_block_vectors(block, BLOCK, dim)[:size])
        texts.extend(_block_texts(block, BLOCK)[:size])
    return Corpus(np.ascontiguousarray(np.concatenate(vectors)), texts)


def chunk_id(row: int) -> str:
    return f"c{row:07d}"


def queries(data: Corpus, count: int) -> QuerySet:
    """``count`` queries for ``data``: noisy copies of random rows, and three mid-frequency
    words each."""
    rng = np.random.default_rng([SEED, 3, len(data)])
    rows = rng.integers(0, len(data), count)
    dim = data.vectors.shape[1]
    noisy = data.vectors[rows] + rng.standard_normal((count, dim)).astype(np.float32) * QUERY_NOISE
    vectors: Matrix = (noisy / np.linalg.norm(noisy, axis=1, keepdims=True)).astype(np.float32)
    words = vocabulary()
    picks = rng.integers(100, 5000, (count, 3))
    texts = [" ".join(words[i] for i in row) for row in picks.tolist()]
    return QuerySet(vectors, texts)


IDENTITY_NAME = "synthetic"
IDENTITY_MODEL = "gaussian-clusters-v1"


def identity(dim: int) -> IndexIdentity:
    """The index identity of a store filled with this corpus's vectors."""
    return IndexIdentity(
        embedder=IDENTITY_NAME, model=IDENTITY_MODEL, dimension=dim, chunker="none"
    )


def recall(found: list[list[str]], exact: list[list[int]]) -> float:
    """The share of the exact answers' chunks (``exact``: row numbers) among the ids found."""
    hits = sum(
        len(set(ids) & {chunk_id(i) for i in truth})
        for ids, truth in zip(found, exact, strict=True)
    )
    return hits / sum(len(t) for t in exact)
