"""The shared embedder suite, with the real openai SDK against the wire-format fake server."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from engram.testing import EmbedderSuite
from engram_openai.embedder import OpenAIEmbedder

MakeEmbedder = Callable[..., OpenAIEmbedder]


class TestOpenAIEmbedder(EmbedderSuite):
    """text-embedding-3-small shortened to 256 dims (the `dimensions` request field)."""

    @pytest.fixture
    def embedder(self, make: MakeEmbedder) -> OpenAIEmbedder:
        return make(dimension=256)


class TestOpenAIEmbedderSplittingLongTexts(EmbedderSuite):
    """ada-002 at its native 1536 dims; texts over the input limit are split and averaged."""

    @pytest.fixture
    def embedder(self, make: MakeEmbedder) -> OpenAIEmbedder:
        return make(model="text-embedding-ada-002", long_texts="split")
