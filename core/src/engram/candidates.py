"""Search candidates as arrays: what a store found, before any chunk is built.

A store that offers ``CandidateSearch`` (``engram.protocols``) answers with ``Candidates``: chunk
ids, scores in the store's scale, and its own key per candidate (SQLite: the rowid). A key names
one chunk for the whole search (both halves of a hybrid search give a chunk the same key), so
fusion merges and ranks by key, and chunks are built only for the hits a search returns; a
10-hit hybrid search over 40 + 40 candidates builds 10 chunks, not 80. A store may leave the ids
to be read when asked (``Candidates.by_key``): fusion asks only to break a tie, and the chunks
built for the hits carry their ids.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

Keys = npt.NDArray[np.int64]
Scores = npt.NDArray[np.float64]
NameKeys = Callable[[Keys], list[str]]
"""The chunk ids of keys, in their order ("" for a key whose chunk is gone)."""


class Candidates:
    """Best first, one entry per chunk: ``ids``, ``scores`` and the store's ``keys``; for keyword
    candidates, optionally each one's ``cosines`` with the query (NaN without a vector), when
    the store had them at hand (fusion then asks ``key_scores`` nothing)."""

    __slots__ = ("_ids", "_name", "cosines", "keys", "scores")

    def __init__(
        self,
        ids: list[str] | None,
        scores: Scores,
        keys: Keys,
        cosines: Scores | None = None,
        name: NameKeys | None = None,
    ) -> None:
        if ids is None and name is None:
            raise ValueError("candidates need their ids or a way to name their keys")
        self._ids = ids
        self._name = name
        self.scores = scores
        self.keys = keys
        self.cosines = cosines

    @property
    def ids(self) -> list[str]:
        """The chunk ids, read from the store the first time they are asked for if it left
        them out."""
        if self._ids is None:
            assert self._name is not None
            self._ids = self._name(self.keys)
        return self._ids

    def __len__(self) -> int:
        return len(self.keys)

    def __repr__(self) -> str:
        return f"Candidates(keys={self.keys.tolist()}, scores={self.scores.tolist()})"

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
    def by_key(
        cls, keys: Sequence[int] | Keys, scores: Sequence[float] | Scores, name: NameKeys
    ) -> Candidates:
        """Candidates of distinct keys whose ids ``name`` reads only if someone asks: reading
        80 ids from SQLite cost a hybrid search of 10K chunks half its scan."""
        return cls(None, np.asarray(scores, dtype=np.float64), _keys(keys), name=name)

    def with_cosines(self, cosines: Scores) -> Candidates:
        """These candidates with each one's cosine with the query."""
        if len(cosines) != len(self.keys):
            raise ValueError(f"{len(cosines)} cosines for {len(self.keys)} candidates")
        values = np.asarray(cosines, dtype=np.float64)
        return Candidates(self._ids, self.scores, self.keys, values, self._name)

    @classmethod
    def empty(cls) -> Candidates:
        return cls([], np.empty(0, dtype=np.float64), np.empty(0, dtype=np.int64))


def _keys(keys: Sequence[int] | Keys) -> Keys:
    return np.asarray(keys, dtype=np.int64).reshape(-1)
