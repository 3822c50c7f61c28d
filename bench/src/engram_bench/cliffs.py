"""The query part of the speed section: numpy's exact top-k (the floor every search is compared
with), latency timed in turn with that floor on a shared machine, vector search after many
changed vectors, and hybrid search with its two halves one after the other for a store that
runs them at once (so the bench shows whether running them together pays)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from engram.candidates import Candidates, Keys, Scores
from engram.filters import Filter
from engram.models import Chunk, IndexIdentity
from engram.protocols import CandidateSearch, Store, StoreCapability
from engram.search.candidates import CandidatePair
from engram_bench import synthetic
from engram_bench.timing import Stopwatch, summarize_ms

K = 10
WARMUP = 3
_In = TypeVar("_In")
_Out = TypeVar("_Out")


def exact_top_k(
    matrix: npt.NDArray[np.float32], query: npt.NDArray[np.float32], k: int
) -> list[int]:
    """Row numbers of the ``k`` rows with the highest dot product (cosine: rows are unit)."""
    scores = matrix @ query
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.argsort(-scores[top], kind="stable")].tolist()  # type: ignore[no-any-return]


CHANGED = 5_000


def after_changes(
    store: Store, data: synthetic.Corpus, qvec: list[list[float]], batch: int
) -> dict[str, Any]:
    """Vector latency after ``CHANGED`` stored vectors are replaced (new directions, same ids),
    with no ``optimize`` after: what a long-lived memory looks like between maintenance runs.
    Its numpy floor (over the changed matrix) is timed query by query in turn with it."""
    n = len(data)
    changed = min(CHANGED, n // 2)
    rng = np.random.default_rng(7)
    picked = np.sort(rng.choice(n, size=changed, replace=False))
    fresh = rng.standard_normal((changed, data.vectors.shape[1])).astype(np.float32)
    fresh /= np.linalg.norm(fresh, axis=1, keepdims=True)
    write = Stopwatch()
    for start in range(0, changed, batch):
        rows = picked[start : start + batch].tolist()
        vectors = fresh[start : start + batch]
        chunks = [
            Chunk(
                id=synthetic.chunk_id(i),
                document_id=synthetic.chunk_id(i),
                text=data.texts[i],
                vector=v,
            )
            for i, v in zip(rows, vectors, strict=True)
        ]
        with write.running():
            store.upsert(chunks)
    matrix = data.vectors.copy()
    matrix[picked] = fresh
    floor, store_ms = paired(
        lambda v: exact_top_k(matrix, v, K), lambda v: store.vector_search(v, K), qvec, qvec
    )
    return {
        "changed": changed,
        "write_seconds": write.seconds,
        "vector_ms": store_ms,
        "numpy_ms": floor,
    }


def paired(
    floor: Callable[[npt.NDArray[np.float32]], object],
    call: Callable[[_In], object],
    qvec: list[list[float]],
    inputs: Sequence[_In],
) -> tuple[dict[str, float], dict[str, float]]:
    """Latency of ``floor`` (numpy over the same vectors) and ``call``, query by query in turn,
    so both see the same load on a shared machine."""
    floor_ms, (call_ms,) = in_turn(floor, [call], qvec, inputs)
    return floor_ms, call_ms


def in_turn(
    floor: Callable[[npt.NDArray[np.float32]], object],
    calls: Sequence[Callable[[_In], object]],
    qvec: list[list[float]],
    inputs: Sequence[_In],
) -> tuple[dict[str, float], list[dict[str, float]]]:
    """Latency of ``floor`` and of each of ``calls``, all timed on one query before the next."""
    arrays = [np.asarray(v, dtype=np.float32) for v in qvec]
    for a, v in zip(arrays[:WARMUP], inputs[:WARMUP], strict=True):
        floor(a)
        for call in calls:
            call(v)
    floor_s: list[float] = []
    call_s: list[list[float]] = [[] for _ in calls]
    for a, v in zip(arrays, inputs, strict=True):
        start = time.perf_counter()
        floor(a)
        floor_s.append(time.perf_counter() - start)
        for call, samples in zip(calls, call_s, strict=True):
            start = time.perf_counter()
            call(v)
            samples.append(time.perf_counter() - start)
    return summarize_ms(floor_s), [summarize_ms(s) for s in call_s]


class _OneAfterTheOther:
    """A candidate store seen without ``candidate_pair``: the searcher asks for the vector half,
    then the keyword half, as it does for any other store."""

    def __init__(self, store: CandidateSearch, capabilities: frozenset[StoreCapability]) -> None:
        self._store = store
        self.capabilities = capabilities

    def get_identity(self) -> IndexIdentity | None:
        return self._store.get_identity()  # type: ignore[attr-defined, no-any-return]

    def vector_candidates(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> Candidates:
        return self._store.vector_candidates(vector, k, filter)

    def keyword_candidates(self, query: str, k: int, filter: Filter | None = None) -> Candidates:
        return self._store.keyword_candidates(query, k, filter)

    def key_scores(self, keys: Keys, vector: Sequence[float]) -> Scores:
        return self._store.key_scores(keys, vector)

    def chunks_for(self, keys: Keys, *, vectors: bool = False) -> list[Chunk]:
        return self._store.chunks_for(keys, vectors=vectors)


def one_after_the_other(store: Store) -> Store | None:
    """``store`` with its halves run one after the other, or None when it never runs them at
    once (nothing to compare)."""
    if not isinstance(store, CandidatePair) or not isinstance(store, CandidateSearch):
        return None
    return _OneAfterTheOther(store, store.capabilities)  # type: ignore[return-value]


def latency(
    call: Callable[[_In], _Out], inputs: Sequence[_In]
) -> tuple[dict[str, float], list[_Out]]:
    """Latency summary of ``call`` over ``inputs`` (after ``WARMUP`` untimed calls) and its
    answers, in input order."""
    for item in inputs[:WARMUP]:
        call(item)
    samples = []
    answers = []
    for item in inputs:
        start = time.perf_counter()
        answers.append(call(item))
        samples.append(time.perf_counter() - start)
    return summarize_ms(samples), answers
