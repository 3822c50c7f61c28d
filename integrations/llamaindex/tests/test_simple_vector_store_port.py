"""LlamaIndex's own expectations of a vector store, run against ``EngramVectorStore`` on every
engram store (SQLite, LanceDB, Chroma).

LlamaIndex ships no reusable vector-store test suite: llama-index-core's wheel has no tests, and
the vector-store packages (llama-index-vector-stores-*) each test their own client, mostly
against live services. The closest thing to a shared contract is the test of the reference
store, ``llama-index-core/tests/vector_stores/test_simple.py`` (class ``SimpleVectorStoreTest``,
run-llama/llama_index). That test builds a ``SimpleVectorStore()`` each time, so it cannot be
run unmodified against another store; every test below is one of it, ported faithfully under the
same name: same node ids, metadata, source documents, filters, ``similarity_top_k`` and expected
ids or counts.

One deliberate translation: upstream gives the nodes hand-made 2-d embeddings ([1, 0], [0, 1],
[1, 1]) and queries with [1, 1]. engram embeds the text itself, so the geometry is carried by
the text instead: "north", "south" and "north south", queried with the embedding of "north
south" from ``EngramEmbedding``. The node of weight 3 is then the nearest and the other two are
equally far, exactly as upstream. Where upstream expects a result engram's filters cannot give
(``TEXT_MATCH``, ``IS_EMPTY``), the port expects the clear error instead; each says so.
Upstream's ``test_from_persist_dir`` tests read SimpleVectorStore's JSON file, which this store
does not have; persistence is tested in test_persistence.py.
"""

from __future__ import annotations

import pytest
from llama_index.core.schema import NodeRelationship, RelatedNodeInfo, TextNode
from llama_index.core.vector_stores.types import (
    ExactMatchFilter,
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryResult,
)

from engram_llamaindex import EngramEmbedding, EngramVectorStore, UnsupportedFilter

_NODE_ID_WEIGHT_1_RANK_A = "AF3BE6C4-5F43-4D74-B075-6B0E07900DE8"
_NODE_ID_WEIGHT_2_RANK_C = "7D9CD555-846C-445C-A9DD-F8924A01411D"
_NODE_ID_WEIGHT_3_RANK_C = "452D24AB-F185-414C-A352-590B4B9EE51B"


def _node_embeddings_for_test() -> list[TextNode]:
    """Upstream's three nodes; the text stands for the embedding (see the module docstring)."""
    return [
        TextNode(
            text="north",
            id_=_NODE_ID_WEIGHT_1_RANK_A,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-0")},
            metadata={
                "weight": 1.0,
                "rank": "a",
                "quality": ["medium", "high"],
                "identifier": "6FTR78Yun",
            },
        ),
        TextNode(
            text="south",
            id_=_NODE_ID_WEIGHT_2_RANK_C,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-1")},
            metadata={
                "weight": 2.0,
                "rank": "c",
                "quality": ["medium"],
                "identifier": "6FTR78Ygl",
            },
        ),
        TextNode(
            text="north south",
            id_=_NODE_ID_WEIGHT_3_RANK_C,
            relationships={NodeRelationship.SOURCE: RelatedNodeInfo(node_id="test-2")},
            metadata={
                "weight": 3.0,
                "rank": "c",
                "quality": ["low", "medium", "high"],
                "identifier": "6FTR78Ztl",
            },
        ),
    ]


@pytest.fixture
def filled(store: EngramVectorStore) -> EngramVectorStore:
    store.add(_node_embeddings_for_test())
    return store


@pytest.fixture
def both(embed_model: EngramEmbedding) -> list[float]:
    """Upstream's query embedding [1.0, 1.0]: near both directions, nearest to their sum."""
    return embed_model.get_query_embedding("north south")


def _query(
    store: EngramVectorStore,
    embedding: list[float],
    filters: MetadataFilters | None = None,
    **kwargs: object,
) -> VectorStoreQueryResult:
    result = store.query(VectorStoreQuery(query_embedding=embedding, filters=filters, **kwargs))  # type: ignore[arg-type]
    assert result.ids is not None and result.nodes is not None
    assert [n.node_id for n in result.nodes] == result.ids
    return result


def _count(store: EngramVectorStore, embedding: list[float], flt: MetadataFilter) -> int:
    result = _query(store, embedding, MetadataFilters(filters=[flt]), similarity_top_k=3)
    assert result.ids is not None
    return len(result.ids)


def test_query_without_filters_returns_all_rows_sorted_by_similarity(
    filled: EngramVectorStore, both: list[float]
) -> None:
    result = _query(filled, both, similarity_top_k=3)
    assert result.ids is not None
    assert sorted(result.ids) == sorted(
        [_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C, _NODE_ID_WEIGHT_3_RANK_C]
    )
    assert result.ids[0] == _NODE_ID_WEIGHT_3_RANK_C
    assert result.similarities is not None
    assert result.similarities == sorted(result.similarities, reverse=True)


def test_query_with_filters_returns_multiple_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    result = _query(filled, both, filters, similarity_top_k=3)
    assert result.ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_2_RANK_C]


def test_query_with_filter_applies_top_k(filled: EngramVectorStore, both: list[float]) -> None:
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    result = _query(filled, both, filters, similarity_top_k=1)
    assert result.ids == [_NODE_ID_WEIGHT_3_RANK_C]


def test_query_with_filter_applies_node_id_filter(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(filters=[ExactMatchFilter(key="rank", value="c")])
    result = _query(filled, both, filters, similarity_top_k=3, node_ids=[_NODE_ID_WEIGHT_3_RANK_C])
    assert result.ids == [_NODE_ID_WEIGHT_3_RANK_C]


def test_query_with_exact_filters_returns_single_match(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(
        filters=[
            ExactMatchFilter(key="rank", value="c"),
            ExactMatchFilter(key="weight", value=2.0),
        ]
    )
    assert _query(filled, both, filters).ids == [_NODE_ID_WEIGHT_2_RANK_C]


def test_query_with_contradictive_filter_returns_no_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(
        filters=[
            ExactMatchFilter(key="weight", value=2),
            ExactMatchFilter(key="weight", value=3),
        ]
    )
    assert _query(filled, both, filters).ids == []


def test_query_with_filter_on_unknown_field_returns_no_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(filters=[ExactMatchFilter(key="unknown_field", value="c")])
    assert _query(filled, both, filters).ids == []


def test_delete_removes_document_from_query_results(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filled.delete("test-1")
    result = _query(filled, both, similarity_top_k=2)
    assert result.ids == [_NODE_ID_WEIGHT_3_RANK_C, _NODE_ID_WEIGHT_1_RANK_A]


def test_query_with_filters_with_filter_condition(
    filled: EngramVectorStore, both: list[float]
) -> None:
    pair = [ExactMatchFilter(key="rank", value="c"), ExactMatchFilter(key="weight", value=1.0)]
    either = MetadataFilters(filters=pair, condition=FilterCondition.OR)
    assert len(_query(filled, both, either, similarity_top_k=3).ids or []) == 3
    all_of = MetadataFilters(filters=pair, condition=FilterCondition.AND)
    assert len(_query(filled, both, all_of, similarity_top_k=3).ids or []) == 0


def test_query_with_not_filter_returns_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    filters = MetadataFilters(
        filters=[MetadataFilter(key="rank", operator=FilterOperator.EQ, value="a")],
        condition=FilterCondition.NOT,
    )
    result = _query(filled, both, filters, similarity_top_k=3)
    assert sorted(result.ids or []) == sorted([_NODE_ID_WEIGHT_2_RANK_C, _NODE_ID_WEIGHT_3_RANK_C])


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        # test_query_with_equal_filter_returns_matches
        (MetadataFilter(key="weight", operator=FilterOperator.EQ, value=1.0), 1),
        # test_query_with_notequal_filter_returns_matches
        (MetadataFilter(key="weight", operator=FilterOperator.NE, value=1.0), 2),
        # test_query_with_greaterthan_filter_returns_matches
        (MetadataFilter(key="weight", operator=FilterOperator.GT, value=1.5), 2),
        # test_query_with_greaterthanequal_filter_returns_matches
        (MetadataFilter(key="weight", operator=FilterOperator.GTE, value=1.0), 3),
        # test_query_with_lessthan_filter_returns_matches (upstream only asserts a result; the
        # one node of weight 1.0 is the only one below 1.1)
        (MetadataFilter(key="weight", operator=FilterOperator.LT, value=1.1), 1),
        # test_query_with_lessthanequal_filter_returns_matches
        (MetadataFilter(key="weight", operator=FilterOperator.LTE, value=1.0), 1),
        # test_query_with_in_filter_returns_matches
        (MetadataFilter(key="rank", operator=FilterOperator.IN, value=["a", "c"]), 3),
        # test_query_with_notin_filter_returns_matches
        (MetadataFilter(key="rank", operator=FilterOperator.NIN, value=["c"]), 1),
        # test_query_with_contains_filter_returns_matches
        (MetadataFilter(key="quality", operator=FilterOperator.CONTAINS, value="high"), 2),
        # test_query_with_any_filter_returns_matches
        (MetadataFilter(key="quality", operator=FilterOperator.ANY, value=["high", "low"]), 2),
        # test_query_with_all_filter_returns_matches
        (MetadataFilter(key="quality", operator=FilterOperator.ALL, value=["medium", "high"]), 2),
    ],
    ids=lambda v: v.operator.name if isinstance(v, MetadataFilter) else str(v),
)
def test_query_with_operator_filter_returns_matches(
    filled: EngramVectorStore, both: list[float], flt: MetadataFilter, expected: int
) -> None:
    assert _count(filled, both, flt) == expected


def test_query_with_textmatch_filter_returns_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    """Upstream expects 2 (substring "6FTR78Y"); engram filters compare whole values, so the
    store refuses the operator by name rather than answering differently."""
    flt = MetadataFilter(key="identifier", operator=FilterOperator.TEXT_MATCH, value="6FTR78Y")
    with pytest.raises(UnsupportedFilter, match="TEXT_MATCH"):
        _count(filled, both, flt)


def test_query_with_is_empty_filter_returns_matches(
    filled: EngramVectorStore, both: list[float]
) -> None:
    """Upstream expects all 3 (the key exists nowhere); engram has no "missing or empty" filter,
    so the store refuses the operator by name."""
    flt = MetadataFilter(key="not_existed_key", operator=FilterOperator.IS_EMPTY, value=None)
    with pytest.raises(UnsupportedFilter, match="IS_EMPTY"):
        _count(filled, both, flt)


def test_clear(filled: EngramVectorStore, both: list[float]) -> None:
    filled.clear()
    assert _query(filled, both, similarity_top_k=3).ids == []


def test_delete_nodes(filled: EngramVectorStore, both: list[float]) -> None:
    filled.delete_nodes([_NODE_ID_WEIGHT_1_RANK_A, _NODE_ID_WEIGHT_2_RANK_C])
    assert _query(filled, both, similarity_top_k=3).ids == [_NODE_ID_WEIGHT_3_RANK_C]
