"""nDCG@k and Recall@k against hand-computed values, plus their invariants."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.errors import ConfigError
from engram_bench.metrics import dcg, metric, metric_depth, ndcg_at_k, recall_at_k

QRELS = {"a": 2, "b": 1}


def test_ndcg_uses_graded_gains_and_log2_discount() -> None:
    # DCG of [b, x, a] = 1/log2(2) + 0 + 2/log2(4) = 2; ideal [a, b] = 2 + 1/log2(3).
    expected = 2.0 / (2.0 + 1.0 / math.log2(3))
    assert ndcg_at_k(["b", "x", "a"], QRELS, 10) == pytest.approx(expected)
    assert ndcg_at_k(["b", "x", "a"], QRELS, 10) == pytest.approx(0.760_188, abs=1e-6)


def test_ndcg_cuts_both_the_ranking_and_the_ideal_at_k() -> None:
    # At k=1: DCG = gain of b = 1, ideal = gain of a = 2.
    assert ndcg_at_k(["b", "a"], QRELS, 1) == pytest.approx(0.5)
    assert ndcg_at_k(["a", "b"], QRELS, 1) == pytest.approx(1.0)


def test_perfect_ranking_scores_one_and_nothing_relevant_scores_zero() -> None:
    assert ndcg_at_k(["a", "b", "c"], QRELS, 10) == pytest.approx(1.0)
    assert ndcg_at_k(["x", "y"], QRELS, 10) == 0.0
    assert ndcg_at_k(["a"], {}, 10) == 0.0
    assert ndcg_at_k(["a"], {"a": 0}, 10) == 0.0


def test_recall_counts_relevant_ids_in_the_first_k() -> None:
    assert recall_at_k(["b", "x", "a"], QRELS, 2) == pytest.approx(0.5)
    assert recall_at_k(["b", "x", "a"], QRELS, 3) == pytest.approx(1.0)
    assert recall_at_k([], QRELS, 5) == 0.0
    assert recall_at_k(["a"], {"a": 0, "b": 1}, 5) == 0.0  # grade 0 is not relevant


def test_repeated_ids_count_once_at_their_first_place() -> None:
    assert ndcg_at_k(["a", "a", "b"], QRELS, 10) == pytest.approx(1.0)
    assert recall_at_k(["b", "b"], QRELS, 2) == pytest.approx(0.5)


def test_dcg_of_known_gains() -> None:
    assert dcg([3, 2, 0, 1]) == pytest.approx(3 + 2 / math.log2(3) + 1 / math.log2(5))


def test_metric_names_dispatch_and_bad_names_say_what_to_use() -> None:
    assert metric("ndcg@10", ["b", "x", "a"], QRELS) == ndcg_at_k(["b", "x", "a"], QRELS, 10)
    assert metric("recall@2", ["b", "x", "a"], QRELS) == 0.5
    assert metric_depth("recall@100") == 100
    for bad in ("ndcg", "map@10", "recall@x"):
        with pytest.raises(ConfigError, match="ndcg@"):
            metric(bad, ["a"], QRELS)
    with pytest.raises(ConfigError, match="at least 1"):
        ndcg_at_k(["a"], QRELS, 0)


ids = st.lists(st.sampled_from("abcdefgh"), max_size=12)
qrels = st.dictionaries(st.sampled_from("abcdefgh"), st.integers(0, 3), max_size=8)


@given(ids, qrels, st.integers(1, 12))
def test_scores_lie_between_zero_and_one(
    retrieved: list[str], judged: dict[str, int], k: int
) -> None:
    assert 0.0 <= ndcg_at_k(retrieved, judged, k) <= 1.0 + 1e-12
    assert 0.0 <= recall_at_k(retrieved, judged, k) <= 1.0


@given(ids, qrels, st.integers(1, 11))
def test_recall_never_drops_as_k_grows(
    retrieved: list[str], judged: dict[str, int], k: int
) -> None:
    assert recall_at_k(retrieved, judged, k) <= recall_at_k(retrieved, judged, k + 1)


@given(qrels)
def test_the_ideal_order_is_perfect(judged: dict[str, int]) -> None:
    ideal = sorted(judged, key=lambda d: -judged[d])
    expected = 1.0 if any(g > 0 for g in judged.values()) else 0.0
    assert ndcg_at_k(ideal, judged, 10) == pytest.approx(expected)
