"""Vector checks and encodings.

A chunk's vector is kept as given, rounded to float32 (like every vector database), in the
``vectors`` table; the vec0 index holds its unit-length copy, so cosine scores do not depend on
magnitudes that would overflow or underflow float32 arithmetic. A zero vector has no direction:
it is stored but not indexed, and its cosine similarity with anything (and a zero query's with
everything) is 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from engram.errors import DimensionMismatch, InvalidVector
from engram.models import IndexIdentity
from engram.vectors import check_finite

STORED = np.dtype("<f4")
INDEXED = np.dtype(np.float32)


@dataclass(frozen=True)
class Prepared:
    """A validated vector: bytes for the chunk row, and the unit vector for vec0 (None if zero)."""

    stored: bytes
    unit: bytes | None


def prepare(values: Sequence[float], identity: IndexIdentity, what: str) -> Prepared:
    """Check ``values`` (finite, float32-representable, right length) and encode them."""
    arr = check_finite(values, what)
    if arr.size != identity.dimension:
        raise DimensionMismatch(
            f"{what} has {arr.size} dimensions but this index holds {identity.dimension}-dimension "
            f"vectors from {identity.describe()}; run `engram rebuild` to re-embed everything with "
            f"the new embedder, or switch back to embedder {identity.embedder}/{identity.model}"
        )
    with np.errstate(over="ignore"):
        f32 = arr.astype(STORED)
    if not np.isfinite(f32).all():
        raise InvalidVector(
            f"{what} has values beyond the float32 range (±3.4e38); scale or normalise it"
        )
    return Prepared(f32.tobytes(), _unit(f32))


def decode(blob: bytes) -> list[float]:
    """A stored vector back as Python floats (the float32 values, exactly)."""
    values: list[float] = np.frombuffer(blob, dtype=STORED).astype(np.float64).tolist()
    return values


def _unit(f32: npt.NDArray[np.float32]) -> bytes | None:
    f64 = f32.astype(np.float64)
    norm = float(np.linalg.norm(f64))
    if norm == 0.0:
        return None
    return (f64 / norm).astype(INDEXED).tobytes()
