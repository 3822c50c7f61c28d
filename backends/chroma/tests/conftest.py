"""Fixtures: real Chroma stores, embedded in a temporary folder or against a real ``chroma run``
server started on 127.0.0.1 on a free port (shared by the session, one collection per test)."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import chromadb
import httpx
import pytest

from engram import IndexIdentity
from engram_chroma import ChromaOptions
from engram_chroma.connection import drop_collections, settings
from engram_chroma.store import ChromaStore

IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="markdown:400/80")
READY_TIMEOUT = 60.0
# Chroma fsyncs every write; on a RAM disk the same real files cost a tenth of the time.
RAM_DISK = Path("/dev/shm")


def fast_dir(fallback: Path) -> Iterator[Path]:
    """A fresh folder on the RAM disk when there is one (removed afterwards), else ``fallback``."""
    if RAM_DISK.is_dir() and os.access(RAM_DISK, os.W_OK):
        folder = Path(tempfile.mkdtemp(prefix="engram-chroma-", dir=RAM_DISK))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    else:
        yield fallback


@pytest.fixture
def chroma_dir(tmp_path: Path) -> Iterator[Path]:
    """Where a test's embedded Chroma and server data live."""
    yield from fast_dir(tmp_path)


def chroma_executable() -> str:
    """The ``chroma`` CLI of the interpreter running the tests (the venv's), else PATH's."""
    beside = Path(sys.executable).parent / "chroma"
    found = str(beside) if beside.exists() else shutil.which("chroma")
    if found is None:
        raise pytest.UsageError("the `chroma` command is missing: pip install -e ./backends/chroma")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ChromaServer:
    """A real ``chroma run`` process on 127.0.0.1; started, killed and restarted by tests."""

    def __init__(self, path: Path, log: Path) -> None:
        self.path = path
        self.log = log
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
        with self.log.open("ab") as out:
            self.process = subprocess.Popen(
                [
                    chroma_executable(),
                    "run",
                    "--path",
                    str(self.path),
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
            )
        self._wait_ready()

    def _wait_ready(self) -> None:
        """Poll the heartbeat; waiting on the process between polls also notices a crash."""
        assert self.process is not None
        url = f"http://127.0.0.1:{self.port}/api/v2/heartbeat"
        for _ in range(int(READY_TIMEOUT / 0.05)):
            try:
                if httpx.get(url, timeout=1.0).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            try:
                code = self.process.wait(timeout=0.05)
            except subprocess.TimeoutExpired:
                continue
            raise RuntimeError(f"chroma run exited with {code}; see {self.log}")
        raise RuntimeError(f"chroma run did not answer within {READY_TIMEOUT}s; see {self.log}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(sig)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=20)
        self.process = None

    def kill(self) -> None:
        """The server goes away at once (SIGKILL), as in a crash."""
        self.stop(signal.SIGKILL)

    def options(self, **overrides: Any) -> ChromaOptions:
        values: dict[str, Any] = {
            "mode": "server",
            "host": "127.0.0.1",
            "port": self.port,
            "collection": f"t{uuid.uuid4().hex}",
        }
        values.update(overrides)
        return ChromaOptions(**values)

    def drop(self, options: ChromaOptions) -> None:
        """Remove a test's collections so the shared server stays small."""
        if self.process is None or self.process.poll() is not None:
            return
        client = chromadb.HttpClient(host="127.0.0.1", port=self.port, settings=settings())
        drop_collections(client, options)


@pytest.fixture(scope="session")
def chroma_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromaServer]:
    """One server for the session (each test uses collections of its own)."""
    root = tmp_path_factory.mktemp("chroma-server")
    for data in fast_dir(root):
        server = ChromaServer(data / "data", root / "server.log")
        server.start()
        try:
            yield server
        finally:
            server.stop()


@pytest.fixture
def own_server(chroma_dir: Path, tmp_path: Path) -> Iterator[ChromaServer]:
    """A server of the test's own, for tests that kill and restart it."""
    server = ChromaServer(chroma_dir / "server-data", tmp_path / "server.log")
    server.start()
    yield server
    server.stop()


MakeStore = Callable[..., ChromaStore]


@pytest.fixture(params=["embedded", "server"])
def mode(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(mode: str, chroma_dir: Path, request: pytest.FixtureRequest) -> Iterator[MakeStore]:
    """Open stores in the test's mode on one location (same collection unless told otherwise);
    every store is closed and a server's collections dropped after the test."""
    opened: list[ChromaStore] = []
    server: ChromaServer | None = None
    if mode == "server":
        server = request.getfixturevalue("chroma_server")
        base = server.options()
    else:
        base = ChromaOptions(path=chroma_dir / "chroma")

    def make(**overrides: Any) -> ChromaStore:
        store = ChromaStore(base.model_copy(update=overrides))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
    if server is not None:
        for options in {s.options.collection: s.options for s in opened}.values():
            server.drop(options)


@pytest.fixture
def store(make_store: MakeStore) -> ChromaStore:
    """A store with IDENTITY recorded."""
    s = make_store()
    s.set_identity(IDENTITY)
    return s
