"""Vector checks before anything reaches Chroma, the placeholder of a chunk without a vector, and
the exact cosine that re-scores Chroma's candidates.

Chroma stores float32 and refuses NaN and infinity; a finite value beyond float32's range would
become infinity on the way in, so it is refused here with the others (``InvalidVector``).

A cosine collection normalises every vector in float32 and multiplies it back on the way out:
components of about 1e19 and more overflow to NaN, tiny ones underflow to zero. So Chroma is
given each vector already scaled to length 1 (computed in float64) and its length is kept in the
record's metadata (``split`` / ``join``): what comes back equals what went in up to float32
rounding.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engram import IndexIdentity, InvalidVector, check_dimension

FLOAT32_MAX = float(np.finfo(np.float32).max)
Array = npt.NDArray[np.float64]


def check(vector: Sequence[float], identity: IndexIdentity, what: str) -> Array:
    """``vector`` as float64 after checking length and values against ``identity``."""
    if len(vector) == 0:
        raise InvalidVector(f"{what} is empty; embed the text again, or pass vector=None")
    check_dimension(len(vector), identity, what)
    return check_values(vector, what, stored=True)


def check_values(vector: Sequence[float], what: str, *, stored: bool) -> Array:
    """``vector`` as float64; NaN and infinity are refused, and for a vector to be stored also
    values float32 cannot hold (a query is normalised before Chroma sees it)."""
    try:
        array = np.asarray(vector, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidVector(f"{what} is not a list of numbers; embed the text again") from None
    if array.ndim != 1 or array.size == 0:
        raise InvalidVector(f"{what} is not a flat, non-empty list of numbers")
    bad = ~np.isfinite(array)
    if stored:
        bad |= np.abs(array) > FLOAT32_MAX
    if bad.any():
        position = int(np.argmax(bad))
        raise InvalidVector(
            f"{what} holds {array[position]} at position {position}: NaN, infinite or beyond "
            f"float32 range; embed the text again (the embedder returned a broken vector)"
        )
    return array


def placeholder(chunk_id: str, dimension: int) -> list[float]:
    """The stand-in embedding of a chunk without a vector (Chroma requires one per record).

    A unit vector derived from the id, so placeholders do not pile up as identical points in the
    HNSW graph; they are marked ``engram:vector = False`` and never returned by vector search.
    """
    seed = int.from_bytes(hashlib.sha256(chunk_id.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng(seed).normal(size=dimension)
    return [float(x) for x in v / np.linalg.norm(v)]


def split(vector: Array) -> tuple[list[float], float]:
    """(unit vector, length) of ``vector``; a zero vector is (zeros, 0)."""
    direction = unit(vector)
    peak = float(np.max(np.abs(vector)))
    length = peak * float(np.linalg.norm(vector / peak)) if peak > 0 else 0.0
    return [float(x) for x in direction], length


def join(direction: Sequence[float], length: float) -> list[float]:
    """The stored vector back: its float32 direction times its length."""
    return [float(x) * length for x in direction]


def unit(vector: Array) -> Array:
    """``vector`` scaled to length 1 without overflow for huge values; zero stays zero."""
    peak = float(np.max(np.abs(vector))) if vector.size else 0.0
    if peak == 0.0:
        return np.zeros_like(vector)
    scaled = vector / peak
    result: Array = scaled / float(np.linalg.norm(scaled))
    return result


def cosine(query: Array, rows: Array) -> Array:
    """Cosine similarity of ``query`` with each row; a zero vector on either side scores 0."""
    if rows.size == 0:
        return np.zeros(rows.shape[0])
    q = unit(query)
    norms = np.linalg.norm(rows, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        scores = (rows @ q) / norms
    scores = np.where(norms == 0.0, 0.0, scores)
    result: Array = np.clip(scores, -1.0, 1.0)
    return result
