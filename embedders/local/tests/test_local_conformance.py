"""The shared embedder conformance suite, run against the real model."""

from __future__ import annotations

import pytest

from engram.testing import EmbedderSuite
from engram_local.embedder import LocalEmbedder


class TestLocalEmbedder(EmbedderSuite):
    @pytest.fixture
    def embedder(self, minilm: LocalEmbedder) -> LocalEmbedder:
        return minilm
