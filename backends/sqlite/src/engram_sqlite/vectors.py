"""Vector checks and encodings.

A chunk's vector is kept as given, rounded to float32 (like every vector database), in the
``vectors`` table; the side matrix (``matrix.py``) holds its unit-length copy, so cosine scores do
not depend on magnitudes that would overflow or underflow float32 arithmetic. A zero vector has no
direction: its unit copy is zero, so its cosine similarity with anything (and a zero query's with
everything) is 0.

Writes check and convert a whole batch with one numpy call; only a batch that fails is checked
vector by vector, to name the chunk at fault.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engram import IndexIdentity, InvalidVector, check_dimension, check_vector

STORED = np.dtype("<f4")


def prepare(
    values: Sequence[float] | npt.NDArray[np.float64], identity: IndexIdentity, what: str
) -> npt.NDArray[np.float32]:
    """Check ``values`` (finite, float32-representable, right length); return them as float32."""
    return _in_range(check_vector(values, identity, what), what)


def _in_range(checked: npt.NDArray[np.float64], what: str) -> npt.NDArray[np.float32]:
    """Finite float64 values as a fresh float32 copy, if float32 can hold them."""
    with np.errstate(over="ignore"):
        f32 = checked.astype(STORED)
    if not np.isfinite(f32).all():
        raise InvalidVector(
            f"{what} has values beyond the float32 range (±3.4e38); scale or normalise it"
        )
    return f32


def unit_query(given: npt.NDArray[np.float64], identity: IndexIdentity) -> npt.NDArray[np.float32]:
    """The query vector ``given`` (``check_finite``'s array: every search checks that first,
    also when nothing is stored) checked as ``prepare`` checks it, and scaled to length 1 in
    float32 (a zero vector stays zero). One vector, so scalars where ``unit_rows`` works on a
    matrix: every search pays it."""
    what = "the query vector"
    check_dimension(given.size, identity, what)
    query = _in_range(given, what)
    peak = float(np.abs(query).max())
    if peak > 0:  # divided by the peak first: squaring values near the float32 limit overflows
        query /= np.float32(peak)
        query /= np.float32(math.sqrt(float(query @ query)))
    return query


def prepare_many(
    vectors: Sequence[Sequence[float]], identity: IndexIdentity, names: Sequence[str]
) -> npt.NDArray[np.float32]:
    """Every vector checked as ``prepare`` does, as one ``len x dimension`` float32 matrix."""
    if not vectors:
        return np.empty((0, identity.dimension), dtype=STORED)
    # Straight to float32: a value beyond its range becomes inf, which the finiteness check
    # catches like NaN, and the per-vector pass below then names it.
    try:
        with np.errstate(over="ignore"):
            f32 = np.asarray(vectors, dtype=STORED)
    except (TypeError, ValueError, OverflowError):
        f32 = None
    if (
        f32 is not None
        and f32.ndim == 2
        and f32.shape[1] == identity.dimension
        and np.isfinite(f32).all()
    ):
        return f32
    for values, name in zip(vectors, names, strict=True):  # name the first bad one
        prepare(values, identity, f"the vector of chunk {name!r}")
    raise InvalidVector("a vector in this batch is not a list of numbers; pass lists of floats")


def decode(blob: bytes) -> list[float]:
    """A stored vector back as Python floats (the float32 values, exactly)."""
    values: list[float] = np.frombuffer(blob, dtype=STORED).astype(np.float64).tolist()
    return values
