"""Fixtures: a fake Voyage AI server on loopback, embedders pointed at it (real SDK, real HTTP)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from engram_voyage import VoyageOptions
from engram_voyage.embedder import VoyageEmbedder
from fake_apis import FakeVoyage, StartApi, VoyageEmbeddings

MakeEmbedder = Callable[..., VoyageEmbedder]


@pytest.fixture(autouse=True)
def _no_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test sees the developer's keys or endpoints (the root conftest isolates the config)."""
    for var in ("VOYAGE_API_KEY", "VOYAGE_API_KEY_PATH"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def fake(fake_api: StartApi) -> FakeVoyage:
    return fake_api(VoyageEmbeddings())


@pytest.fixture
def waits() -> list[float]:
    """The backoff waits the embedders asked for (recorded instead of slept)."""
    return []


@pytest.fixture
def ledger_path(tmp_path: Path) -> Path:
    return tmp_path / "usage.sqlite"


@pytest.fixture
def make(fake: FakeVoyage, waits: list[float], ledger_path: Path) -> Iterator[MakeEmbedder]:
    """Build an embedder against the fake server; options override the test defaults."""
    made: list[VoyageEmbedder] = []

    def factory(**options: Any) -> VoyageEmbedder:
        settings: dict[str, Any] = {
            "api_key": SecretStr(fake.api_key),
            "base_url": fake.url,
            "ledger_path": ledger_path,
            "retry_base_delay": 0.01,
        }
        settings.update(options)
        embedder = VoyageEmbedder(VoyageOptions(**settings), sleep=waits.append)
        made.append(embedder)
        return embedder

    yield factory
    for embedder in made:
        embedder.close()
