"""Filters translated to SQL agree with ``engram.filters.matches`` (the reference semantics)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date, datetime, timedelta, timezone
from typing import Any

import pluggy
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
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite.filters import compile_filter, iso_microseconds

IDENTITY = IndexIdentity(embedder="e", model="m", dimension=2, chunker="c")
INJECTIONS = [
    "x' OR '1'='1",
    "'; DROP TABLE chunks; --",
    '") OR 1=1 --',
    "$.a",
    '$."a"',
    "%",
    "_",
    "\\",
    "NULL",
]


def load(store: SQLiteStore, metas: list[dict[str, Any]]) -> None:
    store.set_identity(IDENTITY)
    store.delete_documents(["d"])
    store.upsert(
        [
            Chunk(id=f"c{i}", document_id="d", text="common", vector=[1.0, 0.0], metadata=m)
            for i, m in enumerate(metas)
        ]
    )


def selected(store: SQLiteStore, flt: Filter, n: int) -> dict[str, set[str]]:
    """The ids a filter selects, through every store method that takes a filter."""
    return {
        "vector": {h.chunk.id for h in store.vector_search([1.0, 0.0], n + 1, flt)},
        "keyword": {h.chunk.id for h in store.keyword_search("common", n + 1, flt)},
        "count": {str(store.count(flt))},
    }


def check(store: SQLiteStore, metas: list[dict[str, Any]], flt: Filter) -> None:
    load(store, metas)
    expected = {f"c{i}" for i, m in enumerate(metas) if matches(flt, m)}
    got = selected(store, flt, len(metas))
    assert got == {"vector": expected, "keyword": expected, "count": {str(len(expected))}}, flt
    store.delete_where(flt)
    remaining = {c.id for batch in store.iter_chunks() for c in batch}
    assert remaining == {f"c{i}" for i in range(len(metas))} - expected


@pytest.fixture
def mem(pm: pluggy.PluginManager) -> Iterator[SQLiteStore]:
    with SQLiteStore(SQLiteOptions(path=":memory:"), plugin_manager=pm) as s:
        yield s


TYPED: list[dict[str, Any]] = [
    {"x": 1},
    {"x": 1.0},
    {"x": True},
    {"x": False},
    {"x": "1"},
    {"x": None},
    {"x": [1]},
    {"x": {"y": 1}},
    {},
    {"x": 0},
    {"x": "true"},
]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (Eq(field="x", value=1), {0, 1}),
        (Eq(field="x", value=True), {2}),
        (Eq(field="x", value=False), {3}),
        (Eq(field="x", value="1"), {4}),
        (Eq(field="x", value=None), {5}),
        (Ne(field="x", value=1), {2, 3, 4, 5, 6, 7, 8, 9, 10}),
        (In(field="x", values=[]), set()),
        (In(field="x", values=[True, "1", None]), {2, 4, 5}),
        (In(field="x", values=[0, 1.0]), {0, 1, 9}),
        (Contains(field="x", value=1), {6}),
        (Contains(field="x", value=True), set()),
        (Range(field="x", gte=0), {0, 1, 9}),
        (Range(field="x", gt=0.5, lt=2), {0, 1}),
        (Not(filter=In(field="x", values=[])), set(range(11))),
    ],
)
def test_type_families_are_kept_apart(mem: SQLiteStore, flt: Filter, expected: set[int]) -> None:
    check(mem, TYPED, flt)
    assert {i for i, m in enumerate(TYPED) if matches(flt, m)} == expected


@pytest.mark.parametrize("value", INJECTIONS)
def test_injection_looking_values_match_literally(mem: SQLiteStore, value: str) -> None:
    metas: list[dict[str, Any]] = [{"v": value}, {"v": "other"}, {"v": [value]}, {}]
    for flt in (
        Eq(field="v", value=value),
        Ne(field="v", value=value),
        In(field="v", values=[value, "zzz"]),
        Contains(field="v", value=value),
    ):
        check(mem, metas, flt)
    load(mem, metas)
    assert mem.count(Eq(field="v", value=value)) == 1


def test_field_names_with_hyphens_and_underscores(mem: SQLiteStore) -> None:
    metas: list[dict[str, Any]] = [{"a-b": 1, "_c": "x"}, {"a": 1}]
    check(mem, metas, Eq(field="a-b", value=1))
    check(mem, metas, Eq(field="_c", value="x"))


def test_bad_field_names_are_a_filter_error(mem: SQLiteStore) -> None:
    forged = Eq.model_construct(field='a"] OR 1=1 --', value=1, op="eq")
    with pytest.raises(FilterError, match="field name"):
        compile_filter(forged)
    with pytest.raises(FilterError, match="field name"):
        mem.count(forged)


def test_date_ranges_compare_normalised_instants(mem: SQLiteStore) -> None:
    metas: list[dict[str, Any]] = [
        {"when": "2024-03-01"},
        {"when": "2024-03-01T12:00:00+02:00"},
        {"when": "2024-03-01T23:30:00-05:00"},
        {"when": "not a date"},
        {"when": 20240301},
        {"when": ["2024-03-01"]},
        {},
    ]
    check(mem, metas, Range(field="when", gte=date(2024, 3, 1), lt=datetime(2024, 3, 1, 12)))
    check(mem, metas, Range(field="when", gt="2024-03-02"))
    check(mem, metas, Not(filter=Range(field="when", lte="2024-03-01T10:00:00Z")))


def test_huge_integers_do_not_crash(mem: SQLiteStore) -> None:
    metas: list[dict[str, Any]] = [{"n": 5}, {"n": -5}]
    check(mem, metas, Range(field="n", lt=10**30))
    check(mem, metas, Range(field="n", gt=-(10**400)))
    check(mem, metas, Eq(field="n", value=10**400))
    check(mem, metas, In(field="n", values=[2**64, 5]))
    check(mem, metas, Contains(field="n", value=10**400))


def test_iso_function_is_total() -> None:
    assert iso_microseconds(json.dumps("1970-01-01T00:00:01Z")) == 1_000_000
    assert iso_microseconds(json.dumps("1970-01-01")) == 0
    assert iso_microseconds(json.dumps("0001-01-01T00:00:00+01:00")) is None
    assert iso_microseconds(json.dumps("garbage")) is None
    assert iso_microseconds("12") is None
    assert iso_microseconds("not json") is None
    assert iso_microseconds(None) is None


def test_nul_characters_are_not_truncated(mem: SQLiteStore) -> None:
    metas: list[dict[str, Any]] = [
        {"when": "2024-01-01\x00junk"},
        {"when": "2024-01-01"},
        {"s": "a\x00b"},
        {"s": "a"},
    ]
    check(mem, metas, Range(field="when", gte="2024-01-01"))
    check(mem, metas, Eq(field="s", value="a"))
    check(mem, metas, Eq(field="s", value="a\x00b"))
    check(mem, metas, Contains(field="s", value="a"))


# -- the property: random metadata, random filters, SQL == reference ---------------------------

FIELDS = ["a", "b", "c-d"]
timezones = st.builds(
    timezone, st.timedeltas(min_value=timedelta(hours=-23), max_value=timedelta(hours=23))
)
datetimes = st.datetimes(min_value=datetime(2, 1, 1), max_value=datetime(9998, 12, 31))
aware = st.builds(lambda d, tz: d.replace(tzinfo=tz), datetimes, timezones)
iso_texts = st.one_of(
    st.dates(min_value=date(2, 1, 1), max_value=date(9998, 12, 31)).map(date.isoformat),
    datetimes.map(datetime.isoformat),
    aware.map(datetime.isoformat),
    st.sampled_from(["2024-01-01", "2024-01-01T00:00:00Z", "2024-01-01 10:00", "20240101"]),
)
numbers = st.one_of(
    st.sampled_from([0, 1, -1, 2, 1.0, 0.5, -0.0, 2**53 + 1, float(2**53), 1e-7, 1e300]),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
)
texts = st.one_of(
    st.sampled_from(["x", "1", "true", "", "X", "null", "a\x00b", "2024-01-01\x00", *INJECTIONS]),
    iso_texts,
    st.text(max_size=8),
)
scalars = st.one_of(st.none(), st.booleans(), numbers, texts)
values = st.one_of(
    scalars,
    st.lists(scalars, max_size=4),
    st.dictionaries(st.sampled_from(FIELDS), scalars, max_size=2),
)
metadata = st.dictionaries(st.sampled_from(FIELDS), values, max_size=3)
fields = st.sampled_from(FIELDS)


@st.composite
def ranges(draw: st.DrawFn) -> Range:
    bound = draw(
        st.sampled_from(
            [
                numbers,
                st.dates(min_value=date(2, 1, 1), max_value=date(9998, 12, 31)),
                datetimes,
                aware,
            ]
        )
    )
    names = draw(st.lists(st.sampled_from(["gt", "gte", "lt", "lte"]), min_size=1, unique=True))
    return Range(field=draw(fields), **{n: draw(bound) for n in names})


leaves = st.one_of(
    st.builds(Eq, field=fields, value=scalars),
    st.builds(Ne, field=fields, value=scalars),
    st.builds(In, field=fields, values=st.lists(scalars, max_size=4)),
    st.builds(Contains, field=fields, value=st.one_of(st.booleans(), numbers, texts)),
    ranges(),
)
filters = st.recursive(
    leaves,
    lambda inner: st.one_of(
        st.builds(And, filters=st.lists(inner, min_size=1, max_size=3)),
        st.builds(Or, filters=st.lists(inner, min_size=1, max_size=3)),
        st.builds(Not, filter=inner),
    ),
    max_leaves=6,
)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metas=st.lists(metadata, min_size=1, max_size=8), flt=filters)
def test_sql_filters_agree_with_the_reference(
    mem: SQLiteStore, metas: list[dict[str, Any]], flt: Filter
) -> None:
    check(mem, metas, flt)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(metas=st.lists(metadata, min_size=1, max_size=8), data=st.data())
def test_filters_built_from_stored_values_agree(
    mem: SQLiteStore, metas: list[dict[str, Any]], data: st.DataObject
) -> None:
    """Filter values drawn from the stored metadata, so matches are common, not accidental."""
    stored = [(k, v) for m in metas for k, v in m.items()]
    if not stored:
        stored = [("a", 1)]
    field, value = data.draw(st.sampled_from(stored))
    scalar = value if not isinstance(value, list | dict) else None
    element = value[0] if isinstance(value, list) and value else scalar
    candidates: list[Filter] = [
        Eq(field=field, value=scalar),
        Ne(field=field, value=scalar),
        In(field=field, values=[scalar, "x"]),
    ]
    if element is not None:
        candidates.append(Contains(field=field, value=element))
    if isinstance(scalar, int | float) and not isinstance(scalar, bool):
        candidates += [Range(field=field, gte=scalar), Range(field=field, lt=scalar)]
    for flt in candidates:
        check(mem, metas, flt)
