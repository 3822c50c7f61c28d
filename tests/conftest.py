"""Shared fixtures for cross-package tests: isolated config, vaults on disk, open memories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_config
from engram.memory import Memory
from support import MemoryFactory


@pytest.fixture(autouse=True)
def _isolated_config(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """No test reads the developer's own config or environment overrides."""
    home = tmp_path_factory.mktemp("user-config")
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(home / "config.toml"))
    for var in ("ENGRAM_CONFIG", "ENGRAM_LOAD_PLUGINS", "ENGRAM_TRACE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[MemoryFactory]:
    """Open a Memory rooted at tmp_path (store, embedder and settings overridable)."""
    opened: list[Memory] = []

    def factory(store: str = "sqlite", embedder: str = "hash", **overrides: Any) -> Memory:
        data: dict[str, Any] = {"store": {"backend": store}, "embedder": {"provider": embedder}}
        data.update(overrides)
        memory = Memory.open(load_config(data, start=tmp_path))
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.close()


# The example plugin is not installed in the dev venv; test_suite_selftest.py runs its tests
# with its src on the path, as a third party would.
collect_ignore = ["example_plugin"]
