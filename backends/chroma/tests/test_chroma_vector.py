"""Vector search against a numpy brute force: exact top-k (ties aside) with and without
filters, chunks without vectors never returned even when their stand-in would win, zero
vectors scoring 0, and the HNSW settings reaching Chroma."""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import (
    Chunk,
    DimensionMismatch,
    Eq,
    Filter,
    In,
    IndexIdentity,
    InvalidVector,
    Not,
    Range,
)
from engram_chroma import vectors
from engram_chroma.store import ChromaStore

DIM = 16
IDENTITY = IndexIdentity(embedder="hash", model="h-16", dimension=DIM, chunker="none")


def random_chunks(seed: int, n: int) -> list[Chunk]:
    rng = np.random.default_rng(seed)
    out = []
    for i in range(n):
        kind = rng.integers(0, 10)
        vector = None if kind == 0 else [0.0] * DIM if kind == 1 else rng.normal(size=DIM).tolist()
        out.append(
            Chunk(
                id=f"c{i:03}",
                document_id=f"d{i % 4}",
                text=f"chunk {i}",
                vector=vector,
                metadata={"group": int(rng.integers(0, 4)), "n": i},
            )
        )
    return out


def brute_force(chunks: list[Chunk], query: list[float], k: int, flt: Filter | None) -> list[float]:
    from engram import matches

    q = np.asarray(query, dtype=np.float64)
    scores = []
    for c in chunks:
        if c.vector is None or not matches(flt, c.metadata):
            continue
        v = np.asarray(c.vector, dtype=np.float32).astype(np.float64)
        denominator = float(np.linalg.norm(v) * np.linalg.norm(q))
        scores.append(0.0 if denominator == 0 else float(v @ q) / denominator)
    return sorted(scores, reverse=True)[:k]


FILTERS: list[Filter | None] = [
    None,
    Eq(field="group", value=1),
    In(field="group", values=[0, 3]),
    Range(field="n", lt=40),
    Not(filter=Range(field="n", gte=10)),
]


@pytest.fixture
def filled(store: ChromaStore) -> tuple[ChromaStore, list[Chunk]]:
    store.reset()
    store.set_identity(IDENTITY)
    chunks = random_chunks(1, 240)
    store.upsert(chunks)
    return store, chunks


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    seed=st.integers(0, 10_000),
    k=st.sampled_from([1, 3, 10, 50, 300]),
    flt=st.sampled_from(FILTERS),
)
def test_top_k_equals_brute_force(
    filled: tuple[ChromaStore, list[Chunk]], seed: int, k: int, flt: Filter | None
) -> None:
    store, chunks = filled
    query = np.random.default_rng(seed).normal(size=DIM).tolist()
    got = store.vector_search(query, k, flt)
    expected = brute_force(chunks, query, k, flt)
    assert len(got) == len(expected)
    for hit, score in zip(got, expected, strict=True):
        assert math.isclose(hit.score, score, abs_tol=1e-6), (hit.chunk.id, hit.score, score)
        assert hit.vector_score == hit.score and hit.chunk.vector is not None


def test_stand_ins_of_chunks_without_vectors_are_never_returned(store: ChromaStore) -> None:
    """Aim the query straight at the stand-in embedding of a vector-less chunk."""
    store.reset()
    store.set_identity(IDENTITY)
    rng = np.random.default_rng(3)
    real = [
        Chunk(id=f"r{i}", document_id="d", text="t", vector=rng.normal(size=DIM).tolist())
        for i in range(20)
    ]
    ghosts = [Chunk(id=f"g{i}", document_id="d", text="t") for i in range(20)]
    store.upsert(real + ghosts)
    query = vectors.placeholder("g0", DIM)
    got = store.vector_search(query, 5)
    assert [h.chunk.id for h in got] == [
        c.id
        for _, c in sorted(
            (
                (-float(np.dot(c.vector or [], query) / np.linalg.norm(c.vector or [])), c)
                for c in real
            ),
            key=lambda pair: (pair[0], pair[1].id),
        )[:5]
    ]
    assert all(h.chunk.id.startswith("r") for h in store.vector_search(query, 40))
    assert len(store.vector_search(query, 40, Eq(field="nothing", value=None))) == 0
    assert [c.vector for c in store.get(["g0"])] == [None]


def test_zero_vectors_score_zero_and_a_zero_query_scores_everything_zero(
    store: ChromaStore,
) -> None:
    store.reset()
    store.set_identity(IDENTITY)
    store.upsert(
        [
            Chunk(id="zero", document_id="d", text="t", vector=[0.0] * DIM),
            Chunk(id="up", document_id="d", text="t", vector=[1.0] + [0.0] * (DIM - 1)),
            Chunk(id="down", document_id="d", text="t", vector=[-1.0] + [0.0] * (DIM - 1)),
        ]
    )
    got = store.vector_search([1.0] + [0.0] * (DIM - 1), 3)
    assert [(h.chunk.id, round(h.score, 6)) for h in got] == [
        ("up", 1.0),
        ("zero", 0.0),
        ("down", -1.0),
    ]
    assert [round(h.score, 6) for h in store.vector_search([0.0] * DIM, 3)] == [0.0, 0.0, 0.0]


def test_bad_vectors_are_refused_before_anything_is_written(store: ChromaStore) -> None:
    store.reset()
    store.set_identity(IDENTITY)
    good = Chunk(id="ok", document_id="d", text="t", vector=[1.0] * DIM)
    for bad, error in (
        ([1e39] + [0.0] * (DIM - 1), InvalidVector),  # beyond float32
        ([math.nan] * DIM, InvalidVector),
        ([1.0] * (DIM + 1), DimensionMismatch),
    ):
        with pytest.raises(error):
            store.upsert([good, Chunk(id="bad", document_id="d", text="t", vector=bad)])
        assert store.count() == 0
    # A query may hold values float32 cannot: it is normalised before Chroma sees it.
    store.upsert([good])
    (hit,) = store.vector_search([1e300] * DIM, 1)
    assert math.isclose(hit.score, 1.0, abs_tol=1e-6)


def test_hnsw_settings_reach_the_collection(make_store: Callable[..., ChromaStore]) -> None:
    store = make_store(hnsw_ef_search=321, hnsw_max_neighbors=24)
    hnsw = store.collections.chunks.configuration_json["hnsw"]
    assert (hnsw["space"], hnsw["ef_search"], hnsw["max_neighbors"]) == ("cosine", 321, 24)
