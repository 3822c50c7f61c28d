"""The numpy runtime gives the reference model's vectors (sentence-transformers + PyTorch)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from engram_local.embedder import LocalEmbedder

Matrix = npt.NDArray[np.float64]


def _unit_rows(rows: Any) -> Matrix:
    m = np.asarray(rows, dtype=np.float64)
    out: Matrix = m / np.linalg.norm(m, axis=1, keepdims=True)
    return out


@pytest.fixture(scope="module")
def texts(reference: dict[str, Any]) -> list[str]:
    return [s["text"] for s in reference["samples"]]


@pytest.fixture(scope="module")
def ours(minilm: LocalEmbedder, texts: list[str]) -> Matrix:
    return np.asarray(minilm.embed(texts), dtype=np.float64)


def test_every_sample_matches_the_reference(
    ours: Matrix, reference: dict[str, Any], texts: list[str]
) -> None:
    theirs = _unit_rows([s["vector"] for s in reference["samples"]])
    cosines = (_unit_rows(ours) * theirs).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() > 0.99999, f"sample {worst} {texts[worst][:40]!r}: {cosines[worst]}"
    # In practice the two agree to float32 rounding.
    assert np.abs(ours - theirs).max() < 1e-5


def test_reference_covers_truncation_and_the_empty_text(reference: dict[str, Any]) -> None:
    lengths = [s["tokens"] for s in reference["samples"]]
    assert max(lengths) > reference["max_seq_length"] == 256
    assert any(s["text"] == "" for s in reference["samples"])


def test_vectors_have_unit_length(ours: Matrix) -> None:
    assert np.allclose(np.linalg.norm(ours, axis=1), 1.0, atol=1e-6)


def test_a_text_alone_gets_the_vector_it_gets_in_a_batch(
    minilm: LocalEmbedder, ours: Matrix, texts: list[str]
) -> None:
    picks = [0, 5, 16, 29]
    alone = np.asarray([minilm.embed([texts[i]])[0] for i in picks])
    assert np.abs(ours[picks] - alone).max() < 1e-6


def test_input_order_does_not_change_vectors(
    minilm: LocalEmbedder, ours: Matrix, texts: list[str]
) -> None:
    order = list(reversed(range(len(texts))))
    shuffled = np.asarray(minilm.embed([texts[i] for i in order]))
    assert np.abs(shuffled - ours[order]).max() < 1e-6


def test_similar_meaning_scores_higher(minilm: LocalEmbedder) -> None:
    [query] = minilm.embed(["What did we decide about the database?"], input_type="query")
    close, far = minilm.embed(
        [
            "We chose SQLite with FTS5 for storage and search.",
            "The cat slept on the warm windowsill all afternoon.",
        ]
    )
    assert np.dot(query, close) > np.dot(query, far) + 0.1
