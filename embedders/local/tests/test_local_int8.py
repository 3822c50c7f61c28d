"""The int8 variant: its ONNX graph is the same BERT (checked in float32 against the plain
float64 model), its quantized vectors stay close to the float32 model's and the reference's, it
passes the embedder conformance suite, it records its own index identity, and it builds its
quantized file once per weights."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime
import pytest
from safetensors.numpy import load_file

from engram import EmbedderError, EngramConfig
from engram.testing import EmbedderSuite
from engram.testing.host import build_part, build_registry, get_plugin_manager
from engram_local import LocalOptions
from engram_local.batching import pad
from engram_local.embedder import LocalEmbedder
from engram_local.loader import read_spec
from engram_local.onnx_graph import build_bert_graph


@pytest.fixture(scope="session")
def int8_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("int8-cache")


@pytest.fixture(scope="session")
def int8(int8_cache: Path) -> LocalEmbedder:
    embedder = LocalEmbedder(LocalOptions(precision="int8", int8_cache=int8_cache))
    embedder.load()
    return embedder


def _unit(rows: Any) -> np.ndarray:
    m = np.asarray(rows, dtype=np.float64)
    unit: np.ndarray = m / np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-12)
    return unit


@pytest.mark.parametrize("act", ["gelu", "gelu_new", "relu"])
def test_the_float32_graph_is_the_plain_bert(
    tmp_path: Path, make_model: Any, naive: Any, act: str
) -> None:
    config = {"hidden_act": act}
    weights = make_model(tmp_path, config, seed=5)
    spec = read_spec(tmp_path)
    model = build_bert_graph(spec.config, load_file(str(tmp_path / "model.safetensors")))
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    seqs = [[101, 7592, 2088, 999, 102], [101, 2023, 102], [101, 1037, 2146, 6251, 2003, 102]]
    ids, mask = pad(seqs)
    (hidden,) = session.run(None, {"input_ids": ids, "attention_mask": mask})
    for row, seq in enumerate(seqs):
        assert np.abs(hidden[row, : len(seq)] - naive(weights, config, seq)).max() < 2e-4


def test_int8_vectors_stay_close_to_float32_and_the_reference(
    int8: LocalEmbedder, minilm: LocalEmbedder, reference: dict[str, Any]
) -> None:
    texts = [s["text"] for s in reference["samples"]]
    quantized = _unit(int8.embed(texts))
    exact = _unit(minilm.embed(texts))
    theirs = _unit([s["vector"] for s in reference["samples"]])
    for other in (exact, theirs):
        cosines = (quantized * other).sum(axis=1)
        assert cosines.min() > 0.95, cosines
        assert cosines.mean() > 0.98, cosines.mean()
    assert np.allclose(np.linalg.norm(quantized, axis=1), 1.0, atol=1e-5)


def test_int8_ranks_like_float32(int8: LocalEmbedder, minilm: LocalEmbedder) -> None:
    docs = [
        "The billing service is owned by the payments team; Alice is its on-call lead.",
        "Deploys go out on Tuesdays after the staging soak passes.",
        "The cat sat on the mat and watched the rain.",
        "Postgres backups run nightly and are kept for thirty days.",
    ]
    queries = ["who owns billing?", "when do we deploy?", "how long are backups kept?"]
    for embedder in (int8, minilm):
        d = _unit(embedder.embed(docs))
        q = _unit(embedder.embed(queries, input_type="query"))
        assert list(np.argmax(q @ d.T, axis=1)) == [0, 1, 3]


def test_int8_has_its_own_index_identity(int8: LocalEmbedder, minilm: LocalEmbedder) -> None:
    assert (int8.name, int8.model) == ("local-int8", "all-MiniLM-L6-v2-int8")
    assert (minilm.name, minilm.model) == ("local", "all-MiniLM-L6-v2")
    assert int8.dimension == minilm.dimension == 384


def test_the_quantized_model_is_built_once_per_weights(
    int8: LocalEmbedder, int8_cache: Path
) -> None:
    (built,) = int8_cache.glob("*.int8.onnx")
    stamp = built.stat().st_mtime_ns
    again = LocalEmbedder(LocalOptions(precision="int8", int8_cache=int8_cache))
    again.embed(["hello"])
    assert [p.name for p in int8_cache.iterdir()] == [built.name]  # no build folder left behind
    assert built.stat().st_mtime_ns == stamp


def test_a_cache_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    embedder = LocalEmbedder(LocalOptions(precision="int8", int8_cache=blocker / "models"))
    with pytest.raises(EmbedderError, match="int8_cache"):
        embedder.embed(["hello"])


def test_local_int8_is_a_registered_provider(int8_cache: Path) -> None:
    registry = build_registry(get_plugin_manager())
    config = EngramConfig.model_validate(
        {"embedder": {"provider": "local-int8", "int8_cache": str(int8_cache)}}
    )
    embedder = build_part(config, registry, "embedder")
    assert isinstance(embedder, LocalEmbedder)
    assert embedder.model == "all-MiniLM-L6-v2-int8"
    assert len(embedder.embed(["hello"])[0]) == 384


class TestInt8Embedder(EmbedderSuite):
    @pytest.fixture
    def embedder(self, int8: LocalEmbedder) -> LocalEmbedder:
        return int8


def test_without_the_int8_extra_construction_names_the_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # sys.modules[name] = None is how Python marks a module as not importable.
    monkeypatch.setitem(sys.modules, "onnxruntime", None)
    with pytest.raises(
        EmbedderError,
        match=r"onnxruntime; install with: pip install -e './embedders/local\[int8\]'",
    ):
        LocalEmbedder(LocalOptions(precision="int8"))
