"""Vector checks every store makes before writing or searching, written once."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from engram.errors import InvalidVector


def check_finite(values: Sequence[float], what: str) -> npt.NDArray[np.float64]:
    """``values`` as a float64 array; ``InvalidVector`` if empty, not flat, NaN or infinite."""
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError, OverflowError) as exc:
        raise InvalidVector(
            f"{what} is not a list of numbers ({exc}); pass a list of floats"
        ) from None
    if arr.ndim != 1:
        raise InvalidVector(f"{what} is not a flat list of numbers; pass one list of floats")
    if arr.size == 0:
        raise InvalidVector(f"{what} is empty; pass the embedder's vector, or None for no vector")
    bad = np.flatnonzero(~np.isfinite(arr))
    if bad.size:
        raise InvalidVector(
            f"{what} holds NaN or infinite values (first at position {int(bad[0])}); "
            "check the embedder's output before storing it"
        )
    return arr
