"""Vector checks and how a vector is stored.

A chunk's vector is kept as given, rounded to float32, in the ``vector`` column that LanceDB
searches with cosine distance, so the usual embedding costs one copy. Two cases need more care,
because LanceDB computes cosine in float32:

- a vector whose squared length would overflow or underflow float32 is searched through its
  unit-length copy, and the vector as given is kept in ``raw``;
- a zero vector has no direction: it is kept in ``raw`` and not searched at all (its cosine
  with anything is 0, added by the store), like a zero query.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engram import IndexIdentity, InvalidVector, check_vector

F32 = npt.NDArray[np.float32]
NO_VECTOR, SEARCHED, ZERO = 0, 1, 2
_SAFE_SQUARED = (1e-30, 1e30)  # float32 squared lengths that cosine can use as they are


@dataclass(frozen=True)
class Encoded:
    """What the columns hold for one vector: its state, the searched copy and the original
    (``raw`` only when the searched copy is not the original)."""

    state: int
    search: F32 | None
    raw: F32 | None


def encode(values: Sequence[float], identity: IndexIdentity, what: str) -> Encoded:
    """Validate a chunk's vector and decide what each column holds."""
    arr = check_vector(values, identity, what)
    with np.errstate(over="ignore", under="ignore"):
        f32 = arr.astype(np.float32)
        if not np.isfinite(f32).all():
            raise InvalidVector(
                f"{what} has values beyond the float32 range (±3.4e38); scale or normalise it"
            )
        squared = float(np.dot(f32, f32))
    if not f32.any():
        return Encoded(ZERO, None, f32)
    if _SAFE_SQUARED[0] <= squared <= _SAFE_SQUARED[1]:
        return Encoded(SEARCHED, f32, None)
    unit = unit_f32(f32.astype(np.float64))
    assert unit is not None
    return Encoded(SEARCHED, unit, f32)


def unit_f32(arr: npt.NDArray[np.float64]) -> F32 | None:
    """``arr`` scaled to length 1 in float64 (without overflow), as float32; None if zero."""
    peak = float(np.max(np.abs(arr)))
    if peak == 0.0:
        return None
    scaled = arr / peak
    unit: F32 = (scaled / float(np.linalg.norm(scaled))).astype(np.float32)
    return unit


def query_vector(values: Sequence[float], identity: IndexIdentity) -> F32 | None:
    """A query as the unit vector LanceDB compares with; None for a zero query."""
    arr = check_vector(values, identity, "the query vector")
    return unit_f32(arr)


def decode(search: list[float] | None, raw: list[float] | None) -> list[float] | None:
    """The vector as it was given (float32-rounded), from the two columns."""
    chosen = raw if raw is not None else search
    return None if chosen is None else [float(x) for x in chosen]
