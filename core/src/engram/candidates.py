"""Search candidates as arrays: what a store found, before any chunk is built.

A store that offers ``CandidateSearch`` (``engram.protocols``) answers with ``Candidates``: chunk
ids, scores in the store's scale, and its own key per candidate (SQLite: the rowid). Fusion ranks
these, and chunks are built only for the hits a search returns; a 10-hit hybrid search over 40 +
40 candidates builds 10 chunks, not 80.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Keys = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]


@dataclass(frozen=True)
class Candidates:
    """Best first, one entry per chunk id: ``ids``, ``scores`` and the store's ``keys``."""

    ids: list[str]
    scores: Scores
    keys: Keys

    def __len__(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, ids: Sequence[str], scores: Sequence[float], keys: Sequence[int]) -> Candidates:
        """Candidates from parallel lists; a repeated id keeps its first (best) place."""
        seen: dict[str, int] = {}
        for i, chunk_id in enumerate(ids):
            seen.setdefault(chunk_id, i)
        if len(seen) == len(ids):
            return cls(list(ids), np.asarray(scores, dtype=np.float64), _keys(keys))
        picked = sorted(seen.values())
        return cls(
            [ids[i] for i in picked],
            np.asarray([scores[i] for i in picked], dtype=np.float64),
            _keys([keys[i] for i in picked]),
        )

    @classmethod
    def empty(cls) -> Candidates:
        return cls([], np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64))


def _keys(keys: Sequence[int]) -> Keys:
    return np.asarray(keys, dtype=np.int64).reshape(-1)
