"""The shared embedder suite, with the real voyageai SDK against the wire-format fake server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engram.testing import EmbedderSuite
from engram_voyage.embedder import VoyageEmbedder

MakeEmbedder = Callable[..., VoyageEmbedder]


class TestVoyageEmbedder(EmbedderSuite):
    """voyage-3.5 at 256 dims (the `output_dimension` request field)."""

    @pytest.fixture
    def embedder(self, make: MakeEmbedder) -> VoyageEmbedder:
        return make(dimension=256)


class TestVoyageEmbedderSplittingLongTexts(EmbedderSuite):
    """voyage-code-3 at its default 1024 dims; over-long texts split and averaged."""

    @pytest.fixture
    def embedder(self, make: MakeEmbedder) -> VoyageEmbedder:
        return make(model="voyage-code-3", long_texts="split")
