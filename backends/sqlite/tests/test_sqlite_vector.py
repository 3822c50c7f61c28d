"""Vector search against an exact numpy brute force over the same (float32) vectors."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pluggy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Chunk, Eq, Filter, Hit, In, IndexIdentity, Not, matches
from engram_sqlite import SQLiteOptions, SQLiteStore

TOL = 1e-5


def identity(dim: int) -> IndexIdentity:
    return IndexIdentity(embedder="rand", model=f"r{dim}", dimension=dim, chunker="c")


@pytest.fixture
def mem(pm: pluggy.PluginManager) -> Iterator[SQLiteStore]:
    with SQLiteStore(SQLiteOptions(path=":memory:"), plugin_manager=pm) as s:
        yield s


def reference(
    vectors: list[list[float] | None],
    metas: list[dict[str, Any]],
    query: list[float],
    k: int,
    flt: Filter | None = None,
) -> dict[str, float]:
    """Cosine similarity of every eligible chunk, computed in float64 on float32-rounded vectors;
    a zero vector (stored or query) has similarity 0."""
    eligible = [
        i
        for i, (v, m) in enumerate(zip(vectors, metas, strict=True))
        if v is not None and matches(flt, m)
    ]
    if not eligible:
        return {}
    x = np.asarray([vectors[i] for i in eligible], dtype=np.float32).astype(np.float64)
    q = np.asarray(query, dtype=np.float32).astype(np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
    dots = x @ q
    sims = np.divide(dots, norms, out=np.zeros_like(dots), where=norms > 0)
    return {f"c{i}": float(s) for i, s in zip(eligible, sims, strict=True)}


def assert_exact_top_k(hits: list[Hit], scores: dict[str, float], k: int) -> None:
    expected = sorted(scores.values(), reverse=True)[:k]
    got = [h.score for h in hits]
    assert len(hits) == len(expected)
    assert got == sorted(got, reverse=True)
    assert np.allclose(got, expected, atol=TOL)
    for h in hits:
        assert h.score == pytest.approx(scores[h.chunk.id], abs=TOL)
        assert h.vector_score == h.score
    assert len({h.chunk.id for h in hits}) == len(hits)


def load(
    store: SQLiteStore, vectors: list[list[float] | None], metas: list[dict[str, Any]]
) -> None:
    store.upsert(
        [
            Chunk(id=f"c{i}", document_id="d", text=f"chunk {i}", vector=v, metadata=m)
            for i, (v, m) in enumerate(zip(vectors, metas, strict=True))
        ]
    )


# Small integer components make exact ties and zero vectors common.
component = st.one_of(
    st.integers(-2, 2).map(float),
    st.floats(-10, 10, allow_nan=False, allow_infinity=False, width=32),
)
filters_st = st.one_of(
    st.none(),
    st.builds(Eq, field=st.just("g"), value=st.integers(0, 2)),
    st.builds(In, field=st.just("g"), values=st.lists(st.integers(0, 2), max_size=2)),
    st.builds(lambda v: Not(filter=Eq(field="g", value=v)), st.integers(0, 2)),
)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data(), dim=st.integers(1, 6), k=st.integers(1, 12), flt=filters_st)
def test_top_k_equals_brute_force(
    mem: SQLiteStore, data: st.DataObject, dim: int, k: int, flt: Filter | None
) -> None:
    vec = st.lists(component, min_size=dim, max_size=dim)
    vectors = data.draw(st.lists(st.none() | vec, min_size=1, max_size=25))
    metas = data.draw(
        st.lists(
            st.fixed_dictionaries({"g": st.integers(0, 2)}),
            min_size=len(vectors),
            max_size=len(vectors),
        )
    )
    query = data.draw(vec)
    mem.reset()
    mem.set_identity(identity(dim))
    load(mem, vectors, metas)
    hits = mem.vector_search(query, k, flt)
    assert_exact_top_k(hits, reference(vectors, metas, query, k, flt), k)


def test_larger_random_index_with_filters_matches_numpy(mem: SQLiteStore) -> None:
    rng = np.random.default_rng(7)
    n, dim = 3000, 48
    matrix = rng.standard_normal((n, dim)).astype(np.float32)
    vectors = [row.tolist() for row in matrix]
    metas = [{"g": int(i % 7), "even": i % 2 == 0} for i in range(n)]
    mem.set_identity(identity(dim))
    load(mem, vectors, metas)
    for trial in range(5):
        query = rng.standard_normal(dim).tolist()
        for flt in (None, Eq(field="g", value=trial), Eq(field="even", value=True)):
            scores = reference(vectors, metas, query, 10, flt)
            hits = mem.vector_search(query, 10, flt)
            assert_exact_top_k(hits, scores, 10)
            best = sorted(scores, key=lambda i: -scores[i])[:10]
            assert [h.chunk.id for h in hits] == best


def test_a_rare_filter_value_is_found_even_when_far_away(mem: SQLiteStore) -> None:
    """The filter is applied inside the scan: a post-filtered top-k would return nothing here."""
    mem.set_identity(identity(2))
    near = [[1.0, 0.01 * i] for i in range(200)]
    load(mem, [*near, [-1.0, 0.0]], [*({"kind": "common"} for _ in near), {"kind": "rare"}])
    [hit] = mem.vector_search([1.0, 0.0], 5, Eq(field="kind", value="rare"))
    assert hit.chunk.id == "c200"
    assert hit.score == pytest.approx(-1.0)


def test_zero_vectors_score_zero_and_never_crash(mem: SQLiteStore) -> None:
    mem.set_identity(identity(3))
    vectors: list[list[float] | None] = [[1, 0, 0], [0, 0, 0], [-1, 0, 0], None, [0, 1, 0]]
    load(mem, vectors, [{}] * 5)
    hits = mem.vector_search([1, 0, 0], 10)
    assert [(h.chunk.id, round(h.score, 6)) for h in hits] == [
        ("c0", 1.0),
        ("c1", 0.0),
        ("c4", 0.0),
        ("c2", -1.0),
    ]
    assert mem.get(["c1"])[0].vector == [0.0, 0.0, 0.0]
    zero_query = mem.vector_search([0, 0, 0], 10)
    assert [h.chunk.id for h in zero_query] == ["c0", "c1", "c2", "c4"]
    assert {h.score for h in zero_query} == {0.0}


def test_k_above_the_knn_limit_scans_everything(mem: SQLiteStore) -> None:
    rng = np.random.default_rng(3)
    vectors = [rng.standard_normal(4).tolist() for _ in range(60)]
    metas = [{"g": i % 2} for i in range(60)]
    mem.set_identity(identity(4))
    load(mem, vectors, metas)
    query = [0.3, -1.0, 0.2, 0.0]
    for flt in (None, Eq(field="g", value=1)):
        hits = mem.vector_search(query, 5000, flt)
        assert_exact_top_k(hits, reference(vectors, metas, query, 5000, flt), 5000)


def test_tiny_and_huge_magnitudes_keep_exact_cosines(mem: SQLiteStore) -> None:
    mem.set_identity(identity(2))
    vectors: list[list[float] | None] = [[1e-30, 1e-30], [3e37, -3e37], [1e-45, 0.0]]
    load(mem, vectors, [{}] * 3)
    hits = mem.vector_search([1.0, 1.0], 3)
    assert_exact_top_k(hits, reference(vectors, [{}] * 3, [1.0, 1.0], 3), 3)
    assert [h.chunk.id for h in hits] == ["c0", "c2", "c1"]


def test_vectors_are_returned_as_float32_values(mem: SQLiteStore) -> None:
    """``get`` and keyword hits give the stored vector (float32, exactly); vector hits leave it
    out, since decoding it for every hit cost more than the scan of a small store."""
    mem.set_identity(identity(3))
    given_vector = [0.1, 1 / 3, -2.5]
    load(mem, [given_vector], [{}])
    [hit] = mem.vector_search(given_vector, 1)
    assert hit.chunk.vector is None
    [stored] = mem.get([hit.chunk.id])
    [keyword_hit] = mem.keyword_search(stored.text, 1)
    expected = np.asarray(given_vector, dtype=np.float32).astype(np.float64).tolist()
    assert stored.vector == expected == keyword_hit.chunk.vector
    assert stored.vector == pytest.approx(given_vector, rel=1e-6)
