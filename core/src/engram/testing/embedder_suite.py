"""``EmbedderSuite``: the behaviour every Embedder must show. Provide an ``embedder`` fixture."""

from __future__ import annotations

import math
from collections.abc import Iterator

import pytest

from engram.protocols import Embedder
from engram.testing.data import cosine
from engram.testing.integrity import SuiteIntegrity

SAMPLES = [
    "The cat sat on the mat.",
    "Deploys roll back with make rollback ENV=prod.",
    "会议记录 数据库迁移计划",
    "café crème brûlée 🚀",
    "def add(a: int, b: int) -> int:\n    return a + b",
]


class EmbedderSuite(SuiteIntegrity):
    """Conformance tests for an Embedder. Provide an ``embedder`` fixture."""

    _conformance_suite = True
    #: how many texts make a "large" batch; API suites may lower it to keep fake servers fast
    large_batch = 300

    @pytest.fixture
    def embedder(self) -> Embedder | Iterator[Embedder]:
        raise pytest.UsageError(
            "EmbedderSuite needs an `embedder` fixture; define it in your subclass"
        )

    def test_declares_name_model_and_dimension(self, embedder: Embedder) -> None:
        """``name``, ``model`` and a positive ``dimension`` identify the vectors in a store.
        Failure: an attribute missing or the dimension unknown until the first call."""
        assert embedder.name and embedder.model
        assert isinstance(embedder.dimension, int) and embedder.dimension > 0

    def test_one_finite_vector_of_the_declared_dimension_per_text(self, embedder: Embedder) -> None:
        """Every text gets one finite vector of ``dimension`` floats, in input order.
        Failure: batching drops or reorders texts, or the model's size is not the declared one."""
        vectors = embedder.embed(SAMPLES)
        assert len(vectors) == len(SAMPLES)
        for v in vectors:
            assert len(v) == embedder.dimension
            assert all(math.isfinite(x) for x in v)
            assert any(x != 0 for x in v)

    def test_empty_input_returns_no_vectors(self, embedder: Embedder) -> None:
        """``embed([])`` is ``[]`` without calling any API. Failure: an API error on no input."""
        assert embedder.embed([]) == []

    def test_same_text_same_vector(self, embedder: Embedder) -> None:
        """Embedding is deterministic (the content-hash cache depends on it).
        Failure: sampling, dropout or a random seed at inference."""
        a, b = embedder.embed([SAMPLES[1]]), embedder.embed([SAMPLES[1]])
        assert cosine(a[0], b[0]) > 0.9999

    def test_batching_does_not_change_vectors(self, embedder: Embedder) -> None:
        """A text's vector does not depend on the batch it came in (padding must be masked).
        Failure: padding tokens leak into pooling, or batch-level normalisation."""
        together = embedder.embed(SAMPLES)
        alone = [embedder.embed([t])[0] for t in SAMPLES]
        for t, a in zip(together, alone, strict=True):
            assert cosine(t, a) > 0.999

    def test_large_batches_are_split_and_kept_in_order(self, embedder: Embedder) -> None:
        """More texts than one request allows are split into batches and reassembled in order.
        Failure: a batch limit error from the API, or batches concatenated out of order."""
        texts = [f"note number {i} about topic {i % 17}" for i in range(self.large_batch)]
        vectors = embedder.embed(texts)
        assert len(vectors) == len(texts)
        probe = [self.large_batch - 1, 0, self.large_batch // 2]
        for i, v in zip(probe, embedder.embed([texts[i] for i in probe]), strict=True):
            assert cosine(v, vectors[i]) > 0.999

    def test_query_and_document_input_types_are_accepted(self, embedder: Embedder) -> None:
        """Both input types work; asymmetric models may return different vectors for them.
        Failure: the input_type argument is not passed through or not accepted."""
        q = embedder.embed(["where is the rollback command?"], input_type="query")
        d = embedder.embed(["where is the rollback command?"], input_type="document")
        assert len(q[0]) == len(d[0]) == embedder.dimension

    def test_similar_texts_are_closer_than_unrelated_ones(self, embedder: Embedder) -> None:
        """A paraphrase is nearer than an unrelated sentence. Failure: vectors not normalised
        consistently, or texts paired with the wrong vectors."""
        a, b, c = embedder.embed(
            [
                "The cat sat on the mat.",
                "A cat was sitting on the mat.",
                "Quarterly revenue grew five percent in Europe.",
            ]
        )
        assert cosine(a, b) > cosine(a, c)

    def test_empty_and_very_long_texts_do_not_fail(self, embedder: Embedder) -> None:
        """An empty string and a text far beyond the model's input limit both embed (long texts
        are truncated or split as configured). Failure: the API rejected an over-long input."""
        vectors = embedder.embed(["", "word " * 20_000])
        assert len(vectors) == 2
        assert all(
            len(v) == embedder.dimension and all(math.isfinite(x) for x in v) for v in vectors
        )
