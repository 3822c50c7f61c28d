"""``team_server(kind)``: a real shared server ("chroma" or "postgres"), started once for the
session, with a fresh collection / namespace for the calling test and its environment set."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from team_servers import ChromaTeamServer, PostgresTeamServer, TeamServer

STARTERS: dict[str, Callable[[Path], TeamServer]] = {
    "chroma": ChromaTeamServer,
    "postgres": PostgresTeamServer,
}


@pytest.fixture(scope="session")
def _team_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, TeamServer]]:
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
    def get(kind: str) -> TeamServer:
        if kind not in _team_servers:
            _team_servers[kind] = STARTERS[kind](tmp_path_factory.mktemp(f"{kind}-data"))
        server = _team_servers[kind]
        fresh = (
            server.fresh() if isinstance(server, ChromaTeamServer | PostgresTeamServer) else server
        )
        for key, value in fresh.environment().items():
            monkeypatch.setenv(key, value)
        return fresh

    return get
