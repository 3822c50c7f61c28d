"""Fixtures: a fake OpenAI server on loopback and embedders pointed at it (real SDK, real HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from engram_openai import OpenAIOptions
from engram_openai.embedder import OpenAIEmbedder
from fake_apis import FakeOpenAI, OpenAIEmbeddings, StartApi

MakeEmbedder = Callable[..., OpenAIEmbedder]


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's keys or endpoints (the root conftest isolates the config)."""
    for var in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def fake(fake_api: StartApi) -> FakeOpenAI:
    return fake_api(OpenAIEmbeddings())


@pytest.fixture
def waits() -> list[float]:
    """The backoff waits the embedders asked for (recorded instead of slept)."""
    return []


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "usage.sqlite"


@pytest.fixture
def make(fake: FakeOpenAI, waits: list[float], ledger_path: Path) -> Iterator[MakeEmbedder]:
    """Build an embedder against the fake server; options override the test defaults."""
    made: list[OpenAIEmbedder] = []

    def factory(**options: Any) -> OpenAIEmbedder:
        settings: dict[str, Any] = {
            "api_key": SecretStr(fake.api_key),
            "base_url": fake.url,
            "ledger_path": ledger_path,
            "retry_base_delay": 0.01,
        }
        settings.update(options)
        embedder = OpenAIEmbedder(OpenAIOptions(**settings), sleep=waits.append)
        made.append(embedder)
        return embedder

    yield factory
    for embedder in made:
        embedder.close()
