"""MetadataFilters on every store agree with LlamaIndex's own reference filter
(``build_metadata_filter_fn``, what ``SimpleVectorStore`` filters with), nested filters combine,
and what engram cannot express is an error that names it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.schema import TextNode
from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
)
from llama_index.core.vector_stores.utils import build_metadata_filter_fn

from engram_llamaindex import EngramVectorStore, UnsupportedFilter, to_engram_filter
from engram_postgres.testing import fresh_database
from support import memory_factory

META: dict[str, dict[str, Any]] = {
    "n0": {"rank": "a", "weight": 1, "tags": ["x", "y"], "day": "2024-01-05"},
    "n1": {"rank": "b", "weight": 2.5, "tags": ["y"], "day": "2024-03-01"},
    "n2": {"rank": "c", "weight": 3, "tags": [], "day": "2025-01-01"},
    "n3": {"rank": "a", "weight": 4.0, "tags": ["z", "x"]},
    "n4": {"rank": "b", "tags": ["x"]},
    "n5": {"weight": 0, "day": "2023-12-31"},
}
EVERY = sorted(META)


@pytest.fixture(scope="module", params=("sqlite", "lancedb", "chroma", "postgres"))
def loaded(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EngramVectorStore]:
    """One store per backend holding six nodes, shared by the tests of this module (read only)."""
    root: Path = tmp_path_factory.mktemp(f"filters-{request.param}")
    with ExitStack() as stack:
        if request.param == "postgres":  # a database of this module's own
            stack.enter_context(fresh_database(request.getfixturevalue("postgres_dsn")))
        open_memory = stack.enter_context(memory_factory(root, request.param))
        store = EngramVectorStore(open_memory())
        store.add([TextNode(id_=i, text=f"node {i} text", metadata=m) for i, m in META.items()])
        yield store


def _matching(store: EngramVectorStore, filters: MetadataFilters) -> list[str]:
    """Ids the store's query (the backend's own filter translation) returns, all of them."""
    query = VectorStoreQuery(query_str="node text", similarity_top_k=50, filters=filters)
    result = store.query(query)
    by_get = sorted(n.node_id for n in store.get_nodes(filters=filters))
    assert sorted(result.ids or []) == by_get  # the store and engram's reference agree
    return by_get


def _reference(filters: MetadataFilters) -> list[str]:
    keep = build_metadata_filter_fn(lambda i: META[i], filters)
    return [i for i in EVERY if keep(i)]


_FLAT = st.one_of(
    st.builds(
        MetadataFilter,
        key=st.sampled_from(["rank", "missing"]),
        value=st.sampled_from(["a", "b", "c"]),
        operator=st.sampled_from([FilterOperator.EQ, FilterOperator.NE]),
    ),
    st.builds(
        MetadataFilter,
        key=st.just("weight"),
        value=st.sampled_from([0, 1, 2.5, 3, 3.5, 4]),
        operator=st.sampled_from(list(FilterOperator)[:6]),  # EQ GT LT NE GTE LTE
    ),
    st.builds(
        MetadataFilter,
        key=st.sampled_from(["rank"]),
        value=st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=3),
        operator=st.sampled_from([FilterOperator.IN, FilterOperator.NIN]),
    ),
    st.builds(
        MetadataFilter,
        key=st.just("tags"),
        value=st.sampled_from(["x", "y", "z", "w"]),
        operator=st.just(FilterOperator.CONTAINS),
    ),
    st.builds(
        MetadataFilter,
        key=st.just("tags"),
        value=st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=2),
        operator=st.sampled_from([FilterOperator.ANY, FilterOperator.ALL]),
    ),
)
_CONDITIONS = st.sampled_from([FilterCondition.AND, FilterCondition.OR, FilterCondition.NOT])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(filters=st.lists(_FLAT, min_size=1, max_size=3), condition=_CONDITIONS)
def test_every_operator_agrees_with_llamaindex_reference(
    loaded: EngramVectorStore, filters: list[MetadataFilter], condition: FilterCondition
) -> None:
    flt = MetadataFilters(filters=list(filters), condition=condition)
    assert _matching(loaded, flt) == _reference(flt)


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        (FilterOperator.EQ, "a", ["n0", "n3"]),
        (FilterOperator.NE, "a", ["n1", "n2", "n4", "n5"]),
        (FilterOperator.IN, ["b", "c"], ["n1", "n2", "n4"]),
        (FilterOperator.NIN, ["b", "c"], ["n0", "n3", "n5"]),
    ],
)
def test_each_equality_operator(
    loaded: EngramVectorStore, operator: FilterOperator, value: Any, expected: list[str]
) -> None:
    flt = MetadataFilters(filters=[MetadataFilter(key="rank", operator=operator, value=value)])
    assert _matching(loaded, flt) == expected


@pytest.mark.parametrize(
    ("operator", "value", "expected"),
    [
        (FilterOperator.GT, 2.5, ["n2", "n3"]),
        (FilterOperator.GTE, 2.5, ["n1", "n2", "n3"]),
        (FilterOperator.LT, 1, ["n5"]),
        (FilterOperator.LTE, 1, ["n0", "n5"]),
    ],
)
def test_each_range_operator(
    loaded: EngramVectorStore, operator: FilterOperator, value: float, expected: list[str]
) -> None:
    flt = MetadataFilters(filters=[MetadataFilter(key="weight", operator=operator, value=value)])
    assert _matching(loaded, flt) == expected


def test_dates_compare_as_dates(loaded: EngramVectorStore) -> None:
    flt = MetadataFilters(
        filters=[MetadataFilter(key="day", operator=FilterOperator.GTE, value="2024-01-05")]
    )
    assert _matching(loaded, flt) == ["n0", "n1", "n2"]


def test_contains_any_all(loaded: EngramVectorStore) -> None:
    def ids(op: FilterOperator, value: Any) -> list[str]:
        return _matching(
            loaded, MetadataFilters(filters=[MetadataFilter(key="tags", operator=op, value=value)])
        )

    assert ids(FilterOperator.CONTAINS, "x") == ["n0", "n3", "n4"]
    assert ids(FilterOperator.ANY, ["y", "z"]) == ["n0", "n1", "n3"]
    assert ids(FilterOperator.ALL, ["x", "z"]) == ["n3"]


def test_nested_conditions(loaded: EngramVectorStore) -> None:
    # rank is a AND (weight > 3 OR tags holds y)  ->  n3 (weight 4) and n0 (tags y)
    heavy_or_y = MetadataFilters(
        filters=[
            MetadataFilter(key="weight", operator=FilterOperator.GT, value=3),
            MetadataFilter(key="tags", operator=FilterOperator.CONTAINS, value="y"),
        ],
        condition=FilterCondition.OR,
    )
    nested = MetadataFilters(filters=[MetadataFilter(key="rank", value="a"), heavy_or_y])
    assert _matching(loaded, nested) == ["n0", "n3"]
    # NOT of that nested filter: every other node
    negated = MetadataFilters(filters=[nested], condition=FilterCondition.NOT)
    assert _matching(loaded, negated) == ["n1", "n2", "n4", "n5"]
    # an empty MetadataFilters filters nothing
    assert to_engram_filter(MetadataFilters(filters=[])) is None


@pytest.mark.parametrize(
    ("flt", "named"),
    [
        (MetadataFilter(key="rank", operator=FilterOperator.TEXT_MATCH, value="a"), "TEXT_MATCH"),
        (
            MetadataFilter(key="rank", operator=FilterOperator.TEXT_MATCH_INSENSITIVE, value="A"),
            "TEXT_MATCH_INSENSITIVE",
        ),
        (MetadataFilter(key="rank", operator=FilterOperator.IS_EMPTY, value=None), "IS_EMPTY"),
        (MetadataFilter(key="rank", operator=FilterOperator.IN, value="a"), "takes a list"),
        (MetadataFilter(key="rank", operator=FilterOperator.EQ, value=["a"]), "use IN"),
        (MetadataFilter(key="file name", value="x"), "A-Za-z_"),
        (MetadataFilter(key="rank", operator=FilterOperator.GT, value="abc"), "ISO date"),
    ],
)
def test_what_engram_cannot_express_is_named(flt: MetadataFilter, named: str) -> None:
    with pytest.raises(UnsupportedFilter, match=named):
        to_engram_filter(MetadataFilters(filters=[flt]))


def test_delete_nodes_by_filter_and_ids(tmp_path: Path) -> None:
    with memory_factory(tmp_path, "sqlite") as open_memory:
        store = EngramVectorStore(open_memory())
        store.add([TextNode(id_=i, text=f"node {i}", metadata=m) for i, m in META.items()])
        rank_a = MetadataFilters(filters=[MetadataFilter(key="rank", value="a")])
        store.delete_nodes(node_ids=["n0", "n1"], filters=rank_a)  # only n0 is both
        assert sorted(store.client.ids()) == ["n1", "n2", "n3", "n4", "n5"]
        store.delete_nodes(filters=rank_a)
        assert sorted(store.client.ids()) == ["n1", "n2", "n4", "n5"]
        store.delete_nodes(node_ids=[])
        assert store.client.count() == 4
