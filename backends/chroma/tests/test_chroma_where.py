"""Filters on a real Chroma collection: the pushed-down ``where`` never loses a match, is exact
whenever the translator says so, and the store's answers equal ``engram.filters.matches`` on
metadata chosen to hit every place where Chroma's semantics could differ from engram's."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import (
    And,
    Chunk,
    Contains,
    Eq,
    Filter,
    FilterError,
    In,
    IndexIdentity,
    Ne,
    Not,
    Or,
    Range,
    matches,
)
from engram_chroma import ChromaOptions
from engram_chroma.connection import settings as chroma_settings
from engram_chroma.store import ChromaStore
from engram_chroma.where import translate

IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="none")
FIELDS = ["a", "n", "d", "l"]
SCALARS: list[Any] = [
    0,
    1,
    1.0,
    -1,
    2.5,
    0.1,
    True,
    False,
    "1",
    "a",
    "",
    "ünï",
    2**53 - 1,
    2**53,
    2**53 + 1,
    2**63 - 1,
    2**63,
    2**70,
    -(2**70),
    1e300,
    "2026-03-05",
    "2026-03-05T10:00:00+02:00",
    "2026-03-05T08:00:00Z",
    "2026-03-05T08:00:00.000001",
    "0001-01-01",
    "9999-12-31T23:59:59.999999",
    "2026-13-45",
]
VALUES: list[Any] = [
    *SCALARS,
    None,
    {},
    {"x": 1},
    [],
    ["a"],
    ["a", "b"],
    [1, "a", True],
    [1.0, 2],
    [True],
    [2**70],
    [None, {"x": 1}],
    [["a"]],
]
BOUNDS: list[Any] = [0, 1, 2.5, -1, 2**53, 2**63, 1e300, "2026-03-05", "2026-03-05T09:00:00+01:00"]


def corpus() -> list[dict[str, Any]]:
    """Deterministic metadata: every value under every field, plus random mixes."""
    rng = random.Random(7)
    out: list[dict[str, Any]] = [{}]
    for field in FIELDS:
        out += [{field: value} for value in VALUES]
    for _ in range(120):
        keys = rng.sample(FIELDS, rng.randint(1, len(FIELDS)))
        out.append({k: rng.choice(VALUES) for k in keys})
    return out


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ChromaStore, list[Chunk]]]:
    path = tmp_path_factory.mktemp("where") / "chroma"
    store = ChromaStore(ChromaOptions(path=path))
    store.set_identity(IDENTITY)
    chunks = [
        Chunk(
            id=f"c{i}",
            document_id=f"d{i % 7}",
            text="alpha bravo",
            vector=[1.0, float(i % 5), float(i % 3), 0.5] if i % 4 else None,
            metadata=meta,
        )
        for i, meta in enumerate(corpus())
    ]
    store.upsert(chunks)
    yield store, chunks
    store.close()


scalars = st.sampled_from([*SCALARS, None, float("nan"), float("inf")])
leaves = st.one_of(
    st.builds(lambda f, v: Eq(field=f, value=v), st.sampled_from(FIELDS), scalars),
    st.builds(lambda f, v: Ne(field=f, value=v), st.sampled_from(FIELDS), scalars),
    st.builds(
        lambda f, vs: In(field=f, values=vs),
        st.sampled_from(FIELDS),
        st.lists(scalars, max_size=4),
    ),
    st.builds(
        lambda f, v: Contains(field=f, value=v),
        st.sampled_from(FIELDS),
        st.sampled_from([s for s in SCALARS if s is not None]),
    ),
    st.builds(
        lambda f, b, op: Range.model_validate({"field": f, op: b}),
        st.sampled_from(FIELDS),
        st.sampled_from(BOUNDS),
        st.sampled_from(["gt", "gte", "lt", "lte"]),
    ),
)
filters: st.SearchStrategy[Filter] = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.lists(inner, min_size=1, max_size=3).map(lambda fs: And(filters=fs)),
        st.lists(inner, min_size=1, max_size=3).map(lambda fs: Or(filters=fs)),
        inner.map(lambda f: Not(filter=f)),
    ),
    max_leaves=6,
)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(flt=filters)
def test_pushdown_is_a_superset_and_exact_when_it_says_so(
    filled: tuple[ChromaStore, list[Chunk]], flt: Filter
) -> None:
    store, chunks = filled
    expected = {c.id for c in chunks if matches(flt, c.metadata)}
    pushdown = translate(flt)
    if pushdown.nothing:
        assert expected == set()
        return
    got = set(store.collections.chunks.get(where=pushdown.where, include=[])["ids"])
    assert expected <= got, f"the where clause lost matches: {sorted(expected - got)}"
    if pushdown.exact:
        assert got == expected, f"claimed exact, but also matched {sorted(got - expected)}"


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(flt=filters)
def test_store_answers_equal_the_reference_semantics(
    filled: tuple[ChromaStore, list[Chunk]], flt: Filter
) -> None:
    store, chunks = filled
    expected = {c.id for c in chunks if matches(flt, c.metadata)}
    with_vectors = {c.id for c in chunks if c.vector is not None and c.id in expected}
    assert store.count(flt) == len(expected)
    assert {h.chunk.id for h in store.vector_search([1, 1, 1, 1], len(chunks), flt)} == (
        with_vectors
    )
    assert {h.chunk.id for h in store.keyword_search("alpha", len(chunks), flt)} == expected


def test_dates_compare_as_instants_across_time_zones(
    filled: tuple[ChromaStore, list[Chunk]],
) -> None:
    store, chunks = filled
    flt = Range(field="d", gte="2026-03-05T08:00:00Z", lte="2026-03-05T08:00:00Z")
    got = {h.chunk.id for h in store.keyword_search("alpha", 1000, flt)}
    values = {c.metadata.get("d") for c in chunks if c.id in got}
    # 10:00 at +02:00 is 08:00 UTC; the bare date is midnight and stays out.
    assert {"2026-03-05T10:00:00+02:00", "2026-03-05T08:00:00Z"} <= values
    assert "2026-03-05" not in values


def test_booleans_are_not_numbers_and_numbers_cross_int_and_float(
    filled: tuple[ChromaStore, list[Chunk]],
) -> None:
    """The corpus holds 1, 1.0, True, "1" and 0.1 (which Chroma would match with an int 0 if
    numbers were stored as ints) under the same field."""
    store, chunks = filled

    def found(flt: Filter) -> set[str]:
        return {h.chunk.id for h in store.keyword_search("alpha", 1000, flt)}

    ones = {
        c.id for c in chunks if type(c.metadata.get("a")) in (int, float) and c.metadata["a"] == 1
    }
    trues = {c.id for c in chunks if c.metadata.get("a") is True}
    tenths = {c.id for c in chunks if c.metadata.get("a") == 0.1}
    assert ones and trues and tenths
    assert found(Eq(field="a", value=1)) == found(Eq(field="a", value=1.0)) == ones
    assert found(Range(field="a", gte=1, lte=1)) == ones
    assert found(Eq(field="a", value=True)) == trues
    assert found(Eq(field="a", value=0.1)) == tenths
    assert store.count(Eq(field="a", value=0)) == sum(
        1 for c in chunks if type(c.metadata.get("a")) in (int, float) and c.metadata["a"] == 0
    )


def test_field_names_that_slipped_past_validation_are_refused(
    filled: tuple[ChromaStore, list[Chunk]],
) -> None:
    store, _ = filled
    for name in ("a') OR 1=1", "$and", "engram:json", "a.b", ""):
        evil = Eq.model_construct(field=name, value="x", op="eq")
        with pytest.raises(FilterError):
            store.count(evil)
        with pytest.raises(FilterError):
            store.vector_search([1, 0, 0, 0], 3, evil)


def test_array_metadata_left_by_a_dropped_collection_never_widens_results(
    tmp_path: Path,
) -> None:
    """Chroma 1.5 keeps the array metadata of a dropped collection's records and may attach it
    to records created later; the store must still answer ``Contains`` exactly."""
    path = tmp_path / "chroma"
    client = chromadb.PersistentClient(path=str(path), settings=chroma_settings())
    other = client.create_collection("someone-else", embedding_function=None)
    other.add(
        ids=[f"x{i}" for i in range(40)],
        embeddings=np.tile(np.asarray([1, 0, 0, 0], dtype=np.float32), (40, 1)),
        metadatas=[{"engram:list:s:tags": ["leaked"], "k": i} for i in range(40)],
    )
    client.delete_collection("someone-else")
    store = ChromaStore(ChromaOptions(path=path))
    try:
        store.set_identity(IDENTITY)
        store.upsert(
            [
                Chunk(id=f"c{i}", document_id="d", text="t", vector=[1, 0, 0, 0], metadata={})
                for i in range(40)
            ]
        )
        leaked = Contains(field="tags", value="leaked")
        assert store.count(leaked) == 0
        assert store.vector_search([1, 0, 0, 0], 50, leaked) == []
        assert store.count(Not(filter=leaked)) == 40
    finally:
        store.close()
        client.close()  # type: ignore[attr-defined]
