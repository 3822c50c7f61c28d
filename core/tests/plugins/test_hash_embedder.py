"""The feature-hashing embedder and the BaseEmbedder batching/checking it is built on."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.embedding.base import BaseEmbedder
from engram.errors import EmbedderError, MissingKeyError
from engram.models import InputType
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Embedder


def _cos(a: list[float], b: list[float]) -> float:
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_hash_embedder_satisfies_the_embedder_protocol(embedder: HashEmbedder) -> None:
    assert isinstance(embedder, Embedder)
    assert (embedder.name, embedder.model, embedder.dimension) == ("hash", "feature-hash-v1", 256)


def test_registered_as_hash_with_its_options() -> None:
    entry = build_registry(get_plugin_manager(load_entry_points=False)).get("embedder", "hash")
    assert entry.options is HashEmbedderOptions
    built = entry.build(HashEmbedderOptions(dimension=32))
    assert isinstance(built, HashEmbedder)
    assert built.dimension == 32
    assert len(built.embed(["hello"])[0]) == 32


@pytest.mark.parametrize("raw", [{"dimension": 7}, {"dimension": 8193}, {"dims": 64}])
def test_options_reject_bad_values(raw: dict[str, int]) -> None:
    with pytest.raises(ValidationError):
        HashEmbedderOptions.model_validate(raw)


def test_vectors_are_unit_length_with_the_configured_dimension() -> None:
    embedder = HashEmbedder(HashEmbedderOptions(dimension=64))
    vectors = embedder.embed(["one", "two words", "a much longer text " * 20])
    assert [len(v) for v in vectors] == [64, 64, 64]
    assert [float(np.linalg.norm(v)) for v in vectors] == pytest.approx([1.0, 1.0, 1.0])


def test_similar_texts_are_closer_than_unrelated_ones(embedder: HashEmbedder) -> None:
    base, close, far = embedder.embed(
        [
            "the cat sat on the mat",
            "a cat was sitting on a mat",
            "quarterly revenue forecast for the finance team",
        ]
    )
    assert _cos(base, close) > _cos(base, far) + 0.2
    typo, other = embedder.embed(["kubernetes deployment", "kubernets deploymnt"])
    assert _cos(typo, other) > 0.3


def test_case_and_punctuation_do_not_change_the_vector(embedder: HashEmbedder) -> None:
    a, b = embedder.embed(["Hello, World!", "hello world"])
    assert a == b


def test_wordless_texts_get_one_fixed_unit_vector(embedder: HashEmbedder) -> None:
    empty, punct, spaces = embedder.embed(["", "?!... --", "   \n"])
    assert empty == punct == spaces
    assert float(np.linalg.norm(empty)) == pytest.approx(1.0)
    (word,) = embedder.embed(["word"])
    assert math.isfinite(_cos(empty, word))


def test_input_type_is_ignored(embedder: HashEmbedder) -> None:
    assert embedder.embed(["same text"], "query") == embedder.embed(["same text"], "document")


def test_vectors_are_pinned_so_stored_indexes_stay_valid() -> None:
    # Golden values: a change here changes every stored "feature-hash-v1" vector, so it needs a
    # new model name. Python's salted hash() would also fail this (it differs per process).
    (vector,) = HashEmbedder(HashEmbedderOptions(dimension=8)).embed(["Stable, across runs"])
    expected = [-0.566946709514, 0.0, 0.188982236505, 0.566946709514]
    expected += [0.0, -0.188982236505, -0.377964473009, 0.377964473009]
    assert vector == pytest.approx(expected, abs=1e-11)


def test_many_texts_are_embedded_in_batches_in_order() -> None:
    embedder = HashEmbedder(HashEmbedderOptions(dimension=16))
    embedder.max_batch = 3
    texts = [f"text number {i}" for i in range(10)]
    assert embedder.embed(texts) == [embedder.embed([t])[0] for t in texts]
    assert embedder.embed([]) == []


@settings(max_examples=60, deadline=None)
@given(text=st.text(max_size=80))
def test_any_text_gives_a_finite_unit_vector(text: str) -> None:
    (vector,) = HashEmbedder(HashEmbedderOptions(dimension=32)).embed([text])
    assert len(vector) == 32
    assert all(math.isfinite(x) for x in vector)
    assert float(np.linalg.norm(vector)) == pytest.approx(1.0)


# BaseEmbedder


class ScriptedEmbedder(BaseEmbedder):
    """A real BaseEmbedder whose answers are computed by a function: it records each batch."""

    name = "scripted"
    model = "script-1"
    dimension = 2
    max_batch = 2

    def __init__(self, answer: object = None, error: Exception | None = None) -> None:
        self.answer = answer
        self.error = error
        self.batches: list[tuple[list[str], str]] = []

    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        self.batches.append((texts, input_type))
        if self.error is not None:
            raise self.error
        if self.answer is not None:
            return self.answer  # type: ignore[return-value]
        return [[float(len(t)), 1.0] for t in texts]


def test_base_embedder_splits_into_batches_and_keeps_order() -> None:
    embedder = ScriptedEmbedder()
    assert isinstance(embedder, Embedder)
    vectors = embedder.embed(["a", "bb", "ccc", "dddd", "eeeee"], input_type="query")
    assert vectors == [[1.0, 1.0], [2.0, 1.0], [3.0, 1.0], [4.0, 1.0], [5.0, 1.0]]
    assert embedder.batches == [
        (["a", "bb"], "query"),
        (["ccc", "dddd"], "query"),
        (["eeeee"], "query"),
    ]


def test_base_embedder_accepts_numpy_output() -> None:
    embedder = ScriptedEmbedder(answer=np.array([[1, 2], [3, 4]], dtype=np.float32))
    assert embedder.embed(["x", "y"]) == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize(
    ("answer", "pattern"),
    [
        ([[1.0, 2.0]], r"returned 1 vectors for 2 texts"),
        ([[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]], r"vectors of 3 dims, expected 2"),
        ([[1.0, 2.0], [1.0]], r"not lists of numbers of one length"),
        ([[1.0, math.nan], [1.0, 2.0]], r"NaN or infinite values for text 0"),
        ([[1.0, 2.0], [math.inf, 2.0]], r"NaN or infinite values for text 1"),
        ([["a", "b"], [1.0, 2.0]], r"not lists of numbers"),
        (42, r"returned a int, not a list of vectors"),
    ],
)
def test_base_embedder_rejects_bad_answers(answer: object, pattern: str) -> None:
    with pytest.raises(EmbedderError, match=pattern) as info:
        ScriptedEmbedder(answer=answer).embed(["x", "y"])
    assert "scripted/script-1" in str(info.value) or "embed_batch" in str(info.value)


def test_base_embedder_wraps_foreign_errors_and_names_itself() -> None:
    embedder = ScriptedEmbedder(error=ConnectionError("connection refused"))
    with pytest.raises(EmbedderError, match=r"scripted/script-1.*ConnectionError") as info:
        embedder.embed(["x"])
    assert isinstance(info.value.__cause__, ConnectionError)


def test_base_embedder_lets_engram_errors_through() -> None:
    embedder = ScriptedEmbedder(error=MissingKeyError("set SCRIPTED_API_KEY"))
    with pytest.raises(MissingKeyError, match="SCRIPTED_API_KEY"):
        embedder.embed(["x"])


def test_base_embedder_rejects_bad_input() -> None:
    embedder = ScriptedEmbedder()
    with pytest.raises(EmbedderError, match=r"wrap it: embed\(\[text\]\)"):
        embedder.embed("just a string")
    with pytest.raises(EmbedderError, match="text 1 is a int"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]
    with pytest.raises(EmbedderError, match="input_type must be one of document, query"):
        embedder.embed(["ok"], input_type="passage")  # type: ignore[arg-type]
    embedder.max_batch = 0
    with pytest.raises(EmbedderError, match="max_batch is 0"):
        embedder.embed(["ok"])
    assert embedder.batches == []
