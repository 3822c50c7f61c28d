"""Any store as a ``CandidateSearch``: stores that only have ``vector_search`` /
``keyword_search`` (LanceDB, Chroma, the in-memory reference) are searched through these, so the
searcher and fusion have one path whatever the store."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, cast, runtime_checkable

import numpy as np
import numpy.typing as npt

from engram.candidates import Candidates, Keys, Scores
from engram.errors import StoreError
from engram.filters import Filter
from engram.models import Chunk, Hit
from engram.protocols import CandidateSearch, KeywordCeiling, Store


class HitPool:
    """Hits kept by position: each candidate's key is where its chunk sits in the pool, one
    place per chunk id, so a chunk both halves found has one key (as ``CandidateSearch`` asks)."""

    def __init__(self) -> None:
        self._chunks: list[Chunk] = []
        self._place: dict[str, int] = {}

    def add(self, hits: Sequence[Hit]) -> Candidates:
        keys = []
        for hit in hits:
            key = self._place.get(hit.chunk.id)
            if key is None:
                key = self._place[hit.chunk.id] = len(self._chunks)
                self._chunks.append(hit.chunk)
            keys.append(key)
        return Candidates.of([h.chunk.id for h in hits], [h.score for h in hits], keys)

    def key_scores(self, keys: Keys, vector: Sequence[float]) -> Scores:
        unit = unit_vector(vector)
        out = np.full(len(keys), np.nan)
        for i, key in enumerate(keys.tolist()):
            score = cosine(unit, self._chunks[key].vector)
            if score is not None:
                out[i] = score
        return out

    def chunks_for(self, keys: Keys, *, vectors: bool = False) -> list[Chunk]:
        """The pooled chunks, as the store gave them (``vectors`` changes nothing here)."""
        return [self._chunks[key] for key in keys.tolist()]


class HitCandidates(HitPool):
    """``CandidateSearch`` over a store's hit lists."""

    def __init__(self, store: Store) -> None:
        super().__init__()
        self._store = store

    def vector_candidates(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> Candidates:
        return self.add(self._store.vector_search(vector, k, filter))

    def keyword_candidates(self, query: str, k: int, filter: Filter | None = None) -> Candidates:
        return self.add(self._store.keyword_search(query, k, filter))


@runtime_checkable
class CandidatePair(Protocol):
    """Optional for a ``CandidateSearch`` store: both halves of a hybrid search in one call, so
    the store can run them at once (SQLite: its keyword query on a second connection while
    numpy scans). The answers must equal ``vector_candidates`` and ``keyword_candidates``."""

    def candidate_pair(
        self, vector: Sequence[float], query: str, k: int, filter: Filter | None = None
    ) -> tuple[Candidates, Candidates]: ...


_PAIRS: dict[type, bool] = {}
_CANDIDATES: dict[type, bool] = {}
_CEILINGS: dict[type, bool] = {}


def _is(kind: type, store: object, seen: dict[type, bool]) -> bool:
    """``isinstance(store, kind)`` for a runtime protocol of methods, once per class: the
    protocol check walks every member (~10 µs), and every search asks."""
    answer = seen.get(type(store))
    if answer is None:
        answer = isinstance(store, kind)
        # A wrapper that forwards attributes (``__getattr__``) answers for what it wraps: one
        # class, many answers, so it is asked every time.
        if not hasattr(type(store), "__getattr__"):
            seen[type(store)] = answer
    return answer


def both_halves(
    source: CandidateSearch,
    vector: Sequence[float],
    query: str,
    k: int,
    filter: Filter | None,
) -> tuple[Candidates, Candidates]:
    """The vector and keyword candidates of a hybrid search: together when the store can."""
    if _is(CandidatePair, source, _PAIRS):
        return cast(CandidatePair, source).candidate_pair(vector, query, k, filter)
    return source.vector_candidates(vector, k, filter), source.keyword_candidates(query, k, filter)


def keyword_ceiling(store: Store, query: str) -> float | None:
    """The store's keyword ceiling for ``query`` (``KeywordCeiling``), None when it has none.

    A negative or non-finite ceiling is a store bug: it raises, as a raw BM25 rank does, instead
    of quietly falling back to the relative scale."""
    if not _is(KeywordCeiling, store, _CEILINGS):
        return None
    value = cast(KeywordCeiling, store).keyword_ceiling(query)
    if value is None:
        return None
    if not math.isfinite(value) or value < 0:
        raise StoreError(
            f"{type(store).__name__}.keyword_ceiling returned {value!r}; it must be a sum of "
            f"idf values (>= 0) or None"
        )
    return value


def candidate_search(store: Store) -> CandidateSearch:
    """``store`` itself when it answers with candidates, else an adapter over its hit lists."""
    if _is(CandidateSearch, store, _CANDIDATES):
        return cast(CandidateSearch, store)
    return HitCandidates(store)


def unit_vector(vector: Sequence[float] | None) -> npt.NDArray[np.float64] | None:
    """``vector`` scaled to length 1 (float64); None for a missing, zero or non-finite one."""
    if vector is None:
        return None
    arr = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(arr))
    return None if norm == 0 or not math.isfinite(norm) else arr / norm


def cosine(
    unit_query: npt.NDArray[np.float64] | None, vector: Sequence[float] | None
) -> float | None:
    """Cosine of a chunk's stored vector with the (unit) query, None when either is unknown."""
    if unit_query is None or vector is None or len(vector) != len(unit_query):
        return None
    arr = np.asarray(vector, dtype=np.float64)
    norm = float(np.linalg.norm(arr))
    if norm == 0 or not math.isfinite(norm):
        return 0.0
    return float(arr @ unit_query) / norm
