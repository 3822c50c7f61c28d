"""The optimised numpy encoder against a plain float64 BERT, plus its numeric building blocks."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from safetensors.numpy import load_file

from engram_local.batching import pad
from engram_local.model import (
    BertConfig,
    BertEncoder,
    _gelu_erf,
    _softmax,
    l2_normalize,
    max_pool,
    mean_pool,
)

VOCAB = 30522  # the real tokenizer's vocabulary, which the tiny test models share
MAX_POSITIONS = 64

Tiny = tuple[BertEncoder, dict[str, Any]]


def _encoder(folder: Path, config: dict[str, Any]) -> BertEncoder:
    raw = json.loads((folder / "config.json").read_text("utf-8"))
    return BertEncoder(BertConfig.from_dict(raw), load_file(str(folder / "model.safetensors")))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory, make_model: Any) -> Tiny:
    folder = tmp_path_factory.mktemp("tiny")
    weights = make_model(folder)
    return _encoder(folder, {}), weights


sequences = st.lists(
    st.lists(st.integers(min_value=0, max_value=VOCAB - 1), min_size=1, max_size=40),
    min_size=1,
    max_size=6,
)


@settings(max_examples=40, deadline=None)
@given(seqs=sequences)
def test_padded_batches_match_the_plain_model_sequence_by_sequence(
    tiny: Tiny, naive: Any, seqs: list[list[int]]
) -> None:
    encoder, weights = tiny
    ids, mask = pad(seqs)
    hidden = encoder.forward(ids, mask)
    assert hidden.dtype == np.float32
    for row, seq in enumerate(seqs):
        expected = naive(weights, {}, seq)
        assert np.abs(hidden[row, : len(seq)] - expected).max() < 2e-4


@pytest.mark.parametrize("act", ["gelu", "gelu_new", "relu"])
@pytest.mark.parametrize("prefix", ["", "bert."])
def test_activations_and_key_prefixes(
    tmp_path: Path, make_model: Any, naive: Any, act: str, prefix: str
) -> None:
    config = {"hidden_act": act}
    weights = make_model(tmp_path, config, prefix=prefix, seed=3)
    encoder = _encoder(tmp_path, config)
    seq = [101, 7592, 2088, 999, 102]
    ids, mask = pad([seq])
    got = encoder.forward(ids, mask)[0]
    assert np.abs(got - naive(weights, config, seq)).max() < 2e-4


def test_sequences_longer_than_the_position_table_are_refused(tiny: Tiny) -> None:
    encoder, _ = tiny
    ids, mask = pad([[5] * (MAX_POSITIONS + 1)])
    with pytest.raises(ValueError, match="exceeds"):
        encoder.forward(ids, mask)


@settings(max_examples=200, deadline=None)
@given(st.floats(min_value=-20, max_value=20, allow_nan=False, width=32))
def test_gelu_is_x_times_the_normal_cdf(value: float) -> None:
    x = np.array([value], dtype=np.float32)
    _gelu_erf(x)
    exact = 0.5 * value * (1.0 + math.erf(value / math.sqrt(2.0)))
    assert abs(float(x[0]) - exact) <= 4e-7 + 2e-7 * abs(exact)


def test_gelu_on_a_dense_grid() -> None:
    grid = np.linspace(-12, 12, 200_001, dtype=np.float32)
    got = grid.copy()
    _gelu_erf(got)
    erf = np.vectorize(math.erf)
    exact = 0.5 * grid.astype(np.float64) * (1.0 + erf(grid.astype(np.float64) / math.sqrt(2.0)))
    assert np.abs(got - exact).max() < 5e-7


def _stable_softmax(x: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    e = np.exp(x.astype(np.float64) - x.max(axis=-1, keepdims=True))
    out: np.ndarray[Any, Any] = e / e.sum(axis=-1, keepdims=True)
    return out


@settings(max_examples=60, deadline=None)
@given(
    scale=st.sampled_from([1.0, 30.0, 200.0, 1e4]),
    shift=st.sampled_from([0.0, -120.0, 95.0]),
    seed=st.integers(0, 2**16),
)
def test_softmax_matches_the_stable_formula_even_where_exp_overflows(
    scale: float, shift: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    scores = (rng.normal(size=(2, 3, 5, 7)) * scale + shift).astype(np.float32)
    scores[0, 0, 0, 3:] = -1e9  # masked keys
    got = _softmax(scores.copy())
    assert np.all(np.isfinite(got))
    assert np.abs(got - _stable_softmax(scores)).max() < 1e-5
    assert np.allclose(got.sum(axis=-1), 1.0, atol=1e-5)


def test_pooling_ignores_padding() -> None:
    hidden = np.arange(2 * 3 * 2, dtype=np.float32).reshape(2, 3, 2)
    mask = np.array([[1, 1, 0], [1, 0, 0]])
    assert mean_pool(hidden, mask).tolist() == [[1.0, 2.0], [6.0, 7.0]]
    assert max_pool(hidden, mask).tolist() == [[2.0, 3.0], [6.0, 7.0]]


def test_l2_normalize_keeps_zero_rows_zero() -> None:
    out = l2_normalize(np.array([[3.0, 4.0], [0.0, 0.0]], dtype=np.float32))
    assert out.tolist() == [[0.6000000238418579, 0.800000011920929], [0.0, 0.0]]
