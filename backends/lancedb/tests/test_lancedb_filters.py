"""Filters on LanceDB agree with ``engram.filters.matches`` exactly, on data built to hit the
edges: ``1`` vs ``1.0`` vs ``True`` vs ``"1"``, ``-0.0``, integers at and beyond int64 and 2**53,
floats one ulp apart, ISO dates with offsets, lists, nested objects, missing fields."""

from __future__ import annotations

import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import And, Chunk, Contains, Eq, Filter, FilterError, In, Ne, Not, Or, Range, matches
from engram.testing.data import IDENTITY, unit_vector
from engram_lancedb import LanceDBOptions
from engram_lancedb.facts import INT64_MAX, INT64_MIN, float_key
from engram_lancedb.filters import compile_filter
from engram_lancedb.store import LanceDBStore

FIELDS = ["a", "b", "when", "tags"]
EDGE_INTS = [0, 1, -1, 2, 3, 2**53, 2**53 + 1, INT64_MAX, INT64_MIN, INT64_MAX + 1, -(2**70)]
EDGE_FLOATS = [0.0, -0.0, 0.5, 1.0, 2.5, 1e-300, -1e300, 2.0**53, 9.223372036854776e18, 1e308]
DATES = [
    "2026-03-05",
    "2026-03-05T00:00:00",
    "2026-03-05T00:00:00+02:00",
    "2026-03-04T22:00:00Z",
    "2026-03-05T00:00:00.000001",
    "2026-13-01",
    "not a date",
    "1",
]

ints = st.one_of(st.sampled_from(EDGE_INTS), st.integers(-5, 5))
floats = st.one_of(
    st.sampled_from(EDGE_FLOATS),
    st.floats(-10, 10, allow_nan=False),
    st.sampled_from(EDGE_INTS).map(lambda i: math.nextafter(float(i), math.inf)),
)
scalars = st.one_of(
    ints, floats, st.booleans(), st.none(), st.sampled_from(DATES), st.sampled_from(["x", "1"])
)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=3),
    st.dictionaries(st.sampled_from(["k"]), scalars, max_size=1),
)
metadata = st.dictionaries(st.sampled_from(FIELDS), values, max_size=4)
number_bounds = st.one_of(ints, floats)
date_bounds = st.sampled_from(DATES[:5])


@st.composite
def ranges(draw: st.DrawFn) -> Range:
    bounds = date_bounds if draw(st.booleans()) else number_bounds
    chosen = draw(st.lists(st.sampled_from(["gt", "gte", "lt", "lte"]), min_size=1, unique=True))
    return Range(field=draw(st.sampled_from(FIELDS)), **{op: draw(bounds) for op in chosen})


field = st.sampled_from([*FIELDS, "missing"])
atoms: st.SearchStrategy[Filter] = st.one_of(
    st.builds(Eq, field=field, value=scalars),
    st.builds(Ne, field=field, value=scalars),
    st.builds(In, field=field, values=st.lists(scalars, max_size=3)),
    st.builds(Contains, field=field, value=st.one_of(ints, floats, st.booleans(), st.just("x"))),
    ranges(),
)
filters: st.SearchStrategy[Filter] = st.recursive(
    atoms,
    lambda inner: st.one_of(
        st.builds(And, filters=st.lists(inner, min_size=1, max_size=3)),
        st.builds(Or, filters=st.lists(inner, min_size=1, max_size=3)),
        st.builds(Not, filter=inner),
    ),
    max_leaves=6,
)
SETTINGS = settings(
    max_examples=150, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)


def chunks_with(metas: list[dict[str, Any]]) -> list[Chunk]:
    return [
        Chunk(id=f"c{i}", document_id="d", text="t", vector=unit_vector(i), metadata=m)
        for i, m in enumerate(metas)
    ]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[LanceDBStore, list[Chunk]]]:
    """One store holding chunks whose metadata covers the edge values, for many filters."""
    store = LanceDBStore(LanceDBOptions(path=tmp_path_factory.mktemp("filters") / "lance"))
    store.set_identity(IDENTITY)
    written = chunks_with(_edge_metadata())
    store.upsert(written)
    yield store, written
    store.close()


def _edge_metadata() -> list[dict[str, Any]]:
    """Every edge value in every field, alone and in lists, plus missing fields."""
    out: list[dict[str, Any]] = [{}]
    edge: list[Any] = [*EDGE_INTS, *EDGE_FLOATS, True, False, None, "x", "1", *DATES]
    for i, value in enumerate(edge):
        out.append({"a": value, "b": edge[(i * 7) % len(edge)]})
        out.append({"when": value, "tags": [value, "x"]})
    out.append({"a": {"k": 1}, "tags": [[1], {"k": 1}]})
    return out


def selected(store: LanceDBStore, flt: Filter) -> set[str]:
    return {h.chunk.id for h in store.vector_search(unit_vector(0), 10_000, flt)}


@SETTINGS
@given(flt=filters)
def test_random_filters_select_exactly_what_matches_selects(
    corpus: tuple[LanceDBStore, list[Chunk]], flt: Filter
) -> None:
    store, written = corpus
    expected = {c.id for c in written if matches(flt, c.metadata)}
    assert selected(store, flt) == expected
    assert store.count(flt) == len(expected)


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(metas=st.lists(metadata, min_size=1, max_size=8), flt=filters)
def test_random_metadata_and_filters_agree_with_the_reference(
    tmp_path: Path, metas: list[dict[str, Any]], flt: Filter
) -> None:
    store = LanceDBStore(LanceDBOptions(path=tmp_path / "random"))
    try:
        store.reset()
        store.set_identity(IDENTITY)
        written = chunks_with(metas)
        store.upsert(written)
        assert selected(store, flt) == {c.id for c in written if matches(flt, c.metadata)}
        kept = {c.id for c in written if not matches(flt, c.metadata)}
        store.delete_where(flt)
        assert {c.id for b in store.iter_chunks() for c in b} == kept
    finally:
        store.close()


@settings(derandomize=True)
@given(a=st.floats(allow_nan=False), b=st.floats(allow_nan=False))
def test_float_keys_sort_like_the_floats(a: float, b: float) -> None:
    assert (float_key(a) < float_key(b)) == (a < b)
    assert (float_key(a) == float_key(b)) == (a == b)


def test_integers_and_floats_one_ulp_apart_are_told_apart(
    corpus: tuple[LanceDBStore, list[Chunk]],
) -> None:
    """2**53 + 1 is not a double: a float bound of 2**53 must still separate the two integers."""
    store, written = corpus
    for flt in (
        Range(field="a", gt=2.0**53),
        Range(field="a", gte=2**53 + 1),
        Range(field="a", lt=2**53 + 1),
        Range(field="a", gt=INT64_MAX),
        Range(field="a", lte=float(INT64_MAX)),
        Eq(field="a", value=float(2**53)),
        Eq(field="a", value=2**53 + 1),
    ):
        assert selected(store, flt) == {c.id for c in written if matches(flt, c.metadata)}, flt


def test_boolean_one_and_string_one_stay_apart(corpus: tuple[LanceDBStore, list[Chunk]]) -> None:
    store, written = corpus
    for value in (True, 1, 1.0, "1"):
        flt = Eq(field="a", value=value)
        got = selected(store, flt)
        assert got == {c.id for c in written if matches(flt, c.metadata)}
        assert got, f"nothing equals {value!r}: the corpus should hold it"


@pytest.mark.parametrize(
    "evil",
    [
        "a') OR 1=1 OR ('",
        "a' OR '1'='1",
        "a; DROP TABLE engram_chunks",
        "a\x00",
        "é",
        "a" * 129,
        "",
        "1a",
    ],
)
def test_field_names_outside_the_pattern_are_refused(evil: str) -> None:
    """Field names reach the clause only after the pattern check (filters built with
    model_construct skip pydantic's validation)."""
    for flt in (
        Eq.model_construct(field=evil, value="x", op="eq"),
        Range.model_construct(field=evil, gt=1, gte=None, lt=None, lte=None, op="range"),
        Not(filter=In.model_construct(field=evil, values=["x"], op="in")),
    ):
        with pytest.raises(FilterError, match="field name"):
            compile_filter(flt)


def test_values_that_are_not_scalars_are_refused() -> None:
    for flt in (
        # Built around validation on purpose: what a careless caller could hand the store.
        Eq.model_construct(field="a", value=["x"], op="eq"),  # type: ignore[arg-type]
        In.model_construct(field="a", values="abc", op="in"),  # type: ignore[arg-type]
        Range.model_construct(
            field="a",
            gt="soon",  # type: ignore[arg-type]
            gte=None,
            lt=None,
            lte=None,
            op="range",
        ),
    ):
        with pytest.raises(FilterError):
            compile_filter(flt)


def test_user_values_never_appear_in_the_clause() -> None:
    """Values are digested and bounds become integers: the clause holds no user text at all."""
    clause = compile_filter(
        Or(
            filters=[
                Eq(field="group", value="x' OR '1'='1"),
                In(field="group", values=["'; --", "%"]),
                Contains(field="tags", value="\\'"),
            ]
        )
    )
    assert clause is not None
    for fragment in ("OR '1'", "--", "%", "\\"):
        assert fragment not in clause
