"""The llm extractor passes engram's ExtractorSuite against the real SDK and a local fake chat
server, with a first provider that always fails, so every suite test goes through the fallback
(test_llm_extractor.py counts the requests)."""

from __future__ import annotations

import pytest
from fake_model import Build
from native_wires import ANTHROPIC_KEY, GOOGLE_KEY, NativeApi

from engram.testing import ExtractorSuite
from engram_llm.extractor import LLMExtractor
from fake_apis import FakeChat


class TestLLMExtractor(ExtractorSuite):
    # The fake model answers with what the rules extractor finds, so a recall figure here would
    # measure the fake, not a model: the labelled conversations still go through the whole wire
    # path, without a promise.
    min_recall = None

    @pytest.fixture
    def extractor(self, build: Build, down: FakeChat, fake: FakeChat) -> LLMExtractor:
        return build(down, fake)


class TestNativeLLMExtractor(ExtractorSuite):
    """The same suite through the native SDKs: an Anthropic provider that is overloaded (529)
    every time, then Gemini, so each test crosses both protocols and the fallback."""

    min_recall = None

    @pytest.fixture
    def extractor(self, build: Build, claude: NativeApi, gemini: NativeApi) -> LLMExtractor:
        claude.down(529)
        return build(
            {"provider": "anthropic", "base_url": claude.url, "api_key": ANTHROPIC_KEY},
            {"provider": "google", "base_url": gemini.url, "api_key": GOOGLE_KEY},
            max_retries=0,
        )


class TestAnthropicExtractor(ExtractorSuite):
    """The suite with Claude answering through its forced tool."""

    min_recall = None

    @pytest.fixture
    def extractor(self, build: Build, claude: NativeApi) -> LLMExtractor:
        return build({"provider": "anthropic", "base_url": claude.url, "api_key": ANTHROPIC_KEY})
