"""Shared fixtures for cross-package tests: isolated config, vaults on disk, open memories."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from support import MemoryFactory, memory_factory

if TYPE_CHECKING:
    from team_servers import TeamServer


@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[MemoryFactory]:
    """Open a Memory rooted at tmp_path on the SQLite store (store, embedder and settings
    overridable). Tests that need no plugin live in core/tests, on the built-in memory store."""
    with memory_factory(tmp_path, "sqlite") as factory:
        yield factory


@pytest.fixture(scope="session")
def _team_servers() -> Iterator[dict[str, TeamServer]]:
    started: dict[str, TeamServer] = {}
    yield started
    for server in started.values():
        server.stop()


@pytest.fixture
def team_server(
    _team_servers: dict[str, TeamServer],
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
) -> Callable[[str], TeamServer]:
    """``team_server(kind)``: a real server that several projects share ("chroma" or
    "postgres", ``team_servers.py``), started once for the session, with a fresh collection or
    namespace for the calling test and its environment set."""
    from team_servers import STARTERS

    def get(kind: str) -> TeamServer:
        if kind not in _team_servers:
            _team_servers[kind] = STARTERS[kind](tmp_path_factory.mktemp(f"{kind}-data"))
        server = _team_servers[kind].fresh()
        for key, value in server.environment().items():
            monkeypatch.setenv(key, value)
        return server

    return get


# The example plugin is not installed in the dev venv; core/tests/plugins/test_suite_selftest.py
# runs its tests with its src on the path, as a third party would.
collect_ignore = ["example_plugin"]
