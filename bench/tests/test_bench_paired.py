"""The paired bootstrap of hybrid minus the best single mode: seeded intervals that bracket the mean
and call a gap significant only when the interval leaves 0."""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram_bench.paired import bootstrap_ci, compare_modes, verdict


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=1, max_size=60))
def test_the_interval_brackets_the_mean_and_repeats_with_the_seed(diffs: list[float]) -> None:
    ci = bootstrap_ci(diffs, resamples=400)
    assert ci["low"] <= ci["mean"] + 1e-12
    assert ci["mean"] <= ci["high"] + 1e-12
    assert min(diffs) - 1e-12 <= ci["low"] <= ci["high"] <= max(diffs) + 1e-12
    assert bootstrap_ci(diffs, resamples=400) == ci


def test_a_consistent_loss_is_worse_and_noise_is_a_tie() -> None:
    loss = [-0.05 + 0.01 * (i % 3) for i in range(200)]
    assert verdict(bootstrap_ci(loss)) == "worse"
    assert verdict(bootstrap_ci([-x for x in loss])) == "better"
    noise = [0.3 * math.sin(i * 1.7) for i in range(200)]
    assert verdict(bootstrap_ci(noise)) == "tie"
    assert bootstrap_ci(noise, seed=1) != bootstrap_ci(noise, seed=2)


def test_hybrid_is_compared_with_the_better_single_mode_per_query() -> None:
    rows: list[dict[str, Any]] = [
        {"store": "s", "embedder": None, "mode": "keyword"},
        {"store": "s", "embedder": "e", "mode": "vector"},
        {"store": "s", "embedder": "e", "mode": "hybrid-weighted"},
    ]
    values = {
        ("s", None, "keyword"): [0.2, 0.2] * 20,
        ("s", "e", "vector"): [1.0, 0.0] * 20,
        ("s", "e", "hybrid-weighted"): [1.0, 0.5] * 20,
    }
    (row,) = compare_modes(rows, values)
    assert row["versus"] == "vector"
    assert row["mode"] == "hybrid-weighted"
    assert row["mean"] == pytest.approx(0.25)
    assert row["verdict"] == "better"
    assert row["queries"] == 40
