"""What every store must check the same way, written once: the index identity, a vector's
length and values, the words keyword search sees, and closing on ``with``.

Public (re-exported from ``engram``): a third-party store uses these so that its errors, and
what a word is, match the built-in stores'. The conformance suite
(``engram.testing.StoreSuite``) checks the behaviour through any store.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.closing import ClosingStore
from engram.errors import DimensionMismatch, IdentityMismatch, InvalidVector, StoreError
from engram.models import IndexIdentity
from engram.text.words import tokenize

__all__ = [
    "ClosingStore",
    "check_dimension",
    "check_finite",
    "check_identity",
    "check_vector",
    "tokenize",
]


def check_identity(
    current: IndexIdentity | None,
    wanted: object,
    *,
    holder: str = "this store",
    fix: str = "",
    vectors_only: bool = False,
) -> bool:
    """Whether ``wanted`` must be recorded (True when nothing is yet). ``StoreError`` if it is no
    ``IndexIdentity``; ``DimensionMismatch`` (vector length differs) or ``IdentityMismatch``
    (embedder, model or chunker differ) if another one is recorded. ``vectors_only`` compares
    what the vectors were made with (embedder, model, dimension): a search may read an index
    another chunker cut, a write may not. ``fix`` adds a store's own way out to the message.

    The one identity check: stores recording an identity, the memory's writes and reads, and
    the searcher's query all refuse a mismatch here, with this one message."""
    if not isinstance(wanted, IndexIdentity):
        raise StoreError(
            f"set_identity expects an IndexIdentity, got {type(wanted).__name__}; "
            f"build one with engram.embedder_identity(embedder, chunker)"
        )
    if current is None:
        return True
    if current == wanted or (vectors_only and _vectors(current) == _vectors(wanted)):
        return False
    error = DimensionMismatch if current.dimension != wanted.dimension else IdentityMismatch
    raise error(
        f"{holder} was built with {current.describe()}, but {wanted.describe()} is configured; "
        f"run `engram rebuild` to re-index everything with the new settings, or switch back to "
        f"embedder {current.embedder}/{current.model} with chunker {current.chunker}{fix}"
    )


def _vectors(identity: IndexIdentity) -> tuple[str, str, int]:
    return identity.embedder, identity.model, identity.dimension


def check_dimension(size: int, identity: IndexIdentity, what: str) -> None:
    """``DimensionMismatch`` naming both lengths unless ``size`` is the index's dimension."""
    if size != identity.dimension:
        raise DimensionMismatch(
            f"{what} has {size} dimensions but this index holds {identity.dimension}-dimension "
            f"vectors from {identity.describe()}; run `engram rebuild` to re-embed everything with "
            f"the new embedder, or switch back to embedder {identity.embedder}/{identity.model}"
        )


def check_finite(values: Sequence[float] | npt.NDArray[Any], what: str) -> npt.NDArray[np.float64]:
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
    if not np.isfinite(arr).all():  # every search passes here: the position only on failure
        first = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise InvalidVector(
            f"{what} holds NaN or infinite values (first at position {first}); "
            "check the embedder's output before storing it"
        )
    return arr


def check_vector(
    values: Sequence[float] | npt.NDArray[Any], identity: IndexIdentity, what: str
) -> npt.NDArray[np.float64]:
    """``values`` as float64 after the finite and the dimension checks, in that order."""
    arr = check_finite(values, what)
    check_dimension(arr.size, identity, what)
    return arr
