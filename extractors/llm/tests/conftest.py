"""Fixtures: fake chat servers (a working one, one that always fails), and extractors built
from options the way engram's config builds them, with waits recorded instead of slept."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_model import KEY, Build, answer
from native_wires import AnthropicMessages, GeminiGenerateContent, NativeApi, NativeWire

from engram_llm import LLMOptions
from engram_llm.extractor import LLMExtractor
from fake_apis import ChatCompletions, FakeChat, StartApi


@pytest.fixture
def fake(fake_api: StartApi) -> FakeChat:
    return fake_api(ChatCompletions(answer, KEY))


@pytest.fixture
def down(fake_api: StartApi) -> FakeChat:
    """A provider that answers every request with HTTP 503."""
    server = fake_api(ChatCompletions(answer, KEY))
    server.down(503)
    return server


@pytest.fixture
def native() -> Iterator[Callable[[NativeWire], NativeApi]]:
    """``native(wire)``: a started fake Anthropic or Gemini API, stopped after the test."""
    started: list[NativeApi] = []

    def start(wire: NativeWire) -> NativeApi:
        api = NativeApi(wire).start()
        started.append(api)
        return api

    yield start
    for api in started:
        api.stop()
    for api in started:
        api.check()


@pytest.fixture
def claude(native: Callable[[NativeWire], NativeApi]) -> NativeApi:
    return native(AnthropicMessages(answer))


@pytest.fixture
def gemini(native: Callable[[NativeWire], NativeApi]) -> NativeApi:
    return native(GeminiGenerateContent(answer))


@pytest.fixture
def waits() -> list[float]:
    return []


@pytest.fixture
def build(tmp_path: Path, waits: list[float]) -> Iterator[Build]:
    """``build(server, ..., **options)``: an extractor over these servers, in this order."""
    made: list[LLMExtractor] = []

    def factory(*servers: FakeChat | dict[str, Any], **shared: Any) -> LLMExtractor:
        providers = [
            s if isinstance(s, dict) else {"name": f"p{i}", "base_url": s.url, "api_key": KEY}
            for i, s in enumerate(servers, 1)
        ]
        shared.setdefault("ledger_path", tmp_path / "usage.sqlite")
        options = LLMOptions.model_validate({"providers": providers, **shared})
        extractor = LLMExtractor(options, sleep=waits.append, random=lambda: 0.5)
        made.append(extractor)
        return extractor

    yield factory
    for extractor in made:
        extractor.close()
