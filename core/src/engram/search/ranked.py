"""A ranked list of search candidates as arrays, and how equal scores are ordered: by chunk id,
read only for the ties that reach the hits a search returns (most sit deep in the candidate
lists), so a store that names its candidates by key reads no ids for most searches."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from engram.candidates import Keys, Scores
from engram.models import Chunk, Hit

Names = Callable[[], list[str]]
"""The chunk ids of a fused list's entries, in its order, read when first asked for."""


class Fused:
    """A fused ranking as arrays, best first: the key to build each chunk from, its fused score
    and the raw side scores (NaN where that side did not score it). Equal scores rank by chunk
    id; the ids are read only for that (``head`` and ``hits`` order the ties that matter, and
    ``resolved`` all of them) and to match chunks that went missing: most ties sit deep in the
    candidate lists, past any hit a search returns."""

    __slots__ = ("_ids", "_names", "_tied", "keys", "keyword_scores", "scores", "vector_scores")

    def __init__(
        self,
        names: Names,
        keys: Keys,
        scores: Scores,
        vector_scores: Scores,
        keyword_scores: Scores,
        *,
        tied: bool = False,
    ) -> None:
        self._names = names
        self._ids: list[str] | None = None
        self._tied = tied  # equal scores not yet put in id order
        self.keys = keys
        self.scores = scores
        self.vector_scores = vector_scores
        self.keyword_scores = keyword_scores

    @property
    def ids(self) -> list[str]:
        if self._ids is None:
            self._ids = self._names()
        return self._ids

    def __len__(self) -> int:
        return len(self.keys)

    def head(
        self,
        limit: int,
        min_score: float | None = None,
        *,
        or_cosine: bool = False,
        or_keyword: bool = False,
    ) -> Fused:
        """The first ``limit`` entries scoring at least ``min_score`` (ranked order kept); with
        ``or_cosine``, an entry whose cosine reaches it is kept too, and with ``or_keyword`` an
        entry the keyword side matched (``passes_min_score``)."""
        fused, picked = self, self._kept(min_score, or_cosine, or_keyword)
        if self._tied and len(picked):
            last = int(picked[min(limit, len(picked)) - 1])
            if _has_tie(self.scores[: last + 2]):  # a tie starts at or before ``last``
                # Reordering within a run of equal scores keeps the run where it is, so the
                # entries kept before the last one taken stay as many: one pass settles it.
                fused = self.resolved(through=last)
                picked = fused._kept(min_score, or_cosine, or_keyword)
        picked = picked[:limit]
        return Fused(
            _picked(fused, picked.tolist()),
            fused.keys[picked],
            fused.scores[picked],
            fused.vector_scores[picked],
            fused.keyword_scores[picked],
        )

    def shown(self, limit: int, min_score: float, *, keyword: bool = False) -> Fused:
        """What a search shows under ``min_score``: its first ``limit`` entries when its best
        entry clears it (fused score or cosine), else only the entries the keyword side matched
        (with ``keyword``: keyword mode shows every match, BM25 has no fixed scale to cut on),
        or nothing.

        The threshold answers "did this search find anything?", not "is each hit good enough?":
        cut hit by hit, it hid the relevant note from a request that shares no word with it and
        sits at cosine 0.2-0.35 while the best hits clear it (PrefEval: Recall@100 0.69 against
        vector search's 0.88, issue 39); a search where nothing clears it still answers
        "nothing relevant" instead of its nearest unrelated notes."""
        if (self.scores >= min_score).any() or (self.vector_scores >= min_score).any():
            return self.head(limit)
        return self.head(limit, math.inf, or_keyword=keyword)

    def resolved(self, through: int | None = None) -> Fused:
        """This ranking with equal scores in chunk id order: every run of them, or those that
        start at or before position ``through``."""
        if not self._tied:
            return self
        values = self.scores.tolist()
        stop = len(values) - 1 if through is None else through
        runs = _tie_runs(values)
        order = list(range(len(values)))
        for start, end in (run for run in runs if run[0] <= stop):
            ids = self.ids
            order[start:end] = sorted(order[start:end], key=ids.__getitem__)
        return self._with(order, tied=any(start > stop for start, _ in runs))

    def hits(self, chunks: Sequence[Chunk]) -> list[Hit]:
        """Hits from the chunks built for ``keys``, in their order; a chunk gone since is left
        out (then the chunks are matched by id, as they are when ties still had to be ordered,
        which moves keys)."""
        if len(chunks) == len(self.keys) and not self._tied:
            return self._hits(chunks)
        fused = self.resolved()
        by_id = {c.id: c for c in chunks}
        return fused._hits([by_id.get(cid) for cid in fused.ids])

    def _hits(self, built: Sequence[Chunk | None]) -> list[Hit]:
        return [
            Hit(chunk=chunk, score=score, vector_score=_maybe(v), keyword_score=_maybe(k))
            for chunk, score, v, k in zip(
                built,
                self.scores.tolist(),
                self.vector_scores.tolist(),
                self.keyword_scores.tolist(),
                strict=True,
            )
            if chunk is not None
        ]

    def _kept(
        self, min_score: float | None, or_cosine: bool, or_keyword: bool = False
    ) -> npt.NDArray[np.intp]:
        picked = np.arange(len(self.keys))
        if min_score is None:
            return picked
        keep = self.scores >= min_score
        if or_cosine:
            keep |= self.vector_scores >= min_score  # NaN (no cosine) compares False
        if or_keyword:
            keep |= ~np.isnan(self.keyword_scores)  # NaN: the keyword side did not match it
        return picked[keep]

    def _with(self, order: list[int], *, tied: bool) -> Fused:
        ids = self._ids
        names: Names = (lambda: [ids[i] for i in order]) if ids is not None else self._names
        return Fused(
            names,
            self.keys[order],
            self.scores[order],
            self.vector_scores[order],
            self.keyword_scores[order],
            tied=tied,
        )


def _tie_runs(values: list[float]) -> list[tuple[int, int]]:
    """(start, end) of each run of two or more equal values."""
    runs = []
    start = 0
    for i in range(1, len(values) + 1):
        if i == len(values) or values[i] != values[start]:
            if i - start > 1:
                runs.append((start, i))
            start = i
    return runs


def _has_tie(scores: Scores) -> bool:
    return len(scores) > 1 and bool((scores[1:] == scores[:-1]).any())


def _picked(fused: Fused, picked: list[int]) -> Names:
    return lambda: [fused.ids[i] for i in picked]


def ranked_fused(
    names: Names, keys: Keys, scores: Scores, vector_scores: Scores, keyword_scores: Scores
) -> Fused:
    """Best score first; ties broken by chunk id (when ``Fused.head`` or ``hits`` reach them)
    so every run ranks alike."""
    order = np.argsort(-scores, kind="stable")
    in_order = scores[order]
    return Fused(
        _reordered(names, order),
        keys[order],
        in_order,
        vector_scores[order],
        keyword_scores[order],
        tied=_has_tie(in_order),
    )


def _reordered(names: Names, order: npt.NDArray[np.intp]) -> Names:
    def read() -> list[str]:
        ids = names()
        return [ids[i] for i in order.tolist()]

    return read


def _maybe(value: float) -> float | None:
    return None if math.isnan(value) else value
