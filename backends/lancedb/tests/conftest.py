"""Fixtures: LanceDB stores in real folders, and on a real S3-compatible server (moto in server
mode) started on 127.0.0.1 for the test session, reached directly or through a TCP relay that a
test can cut to simulate object storage going away."""

from __future__ import annotations

import itertools
import logging
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import boto3
import pytest
from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from engram_lancedb import LanceDBOptions
from engram_lancedb.store import LanceDBStore

BUCKET = "engram-tests"
CREDENTIALS = {
    "aws_access_key_id": "testing",
    "aws_secret_access_key": "testing",
    "aws_region": "us-east-1",
}
MakeStore = Callable[..., LanceDBStore]
_prefixes = itertools.count()


def wait_until_listening(port: int) -> None:
    """Poll until something accepts connections on ``port`` (no fixed sleeps)."""
    ready = threading.Event()
    for _ in range(2000):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            ready.wait(0.005)
    raise RuntimeError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class S3Server:
    endpoint: str

    def options(self, endpoint: str | None = None, **extra: Any) -> dict[str, str]:
        """storage_options for this server (or another endpoint in front of it)."""
        return {
            "aws_endpoint": endpoint or self.endpoint,
            "allow_http": "true",
            "client_max_retries": "1",
            "client_retry_timeout": "5",
            **CREDENTIALS,
            **{k: str(v) for k, v in extra.items()},
        }

    def uri(self, name: str) -> str:
        return f"s3://{BUCKET}/{name}-{next(_prefixes)}"


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """moto's S3 server on a free loopback port, with the test bucket created.

    moto's own S3 application and request handler, served without the all-services dispatcher
    (``ThreadedMotoServer`` inspects every request to find its service, which doubles the cost
    of each of the thousands of requests the suite makes)."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_backend_app("s3")
    app.debug = False
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        port = int(server.server_port)
        wait_until_listening(port)
        endpoint = f"http://127.0.0.1:{port}"
        boto3.client(
            "s3",
            endpoint_url=endpoint,
            aws_access_key_id=CREDENTIALS["aws_access_key_id"],
            aws_secret_access_key=CREDENTIALS["aws_secret_access_key"],
            region_name=CREDENTIALS["aws_region"],
        ).create_bucket(Bucket=BUCKET)
        yield S3Server(endpoint)
    finally:
        server.shutdown()
        thread.join()


class Relay:
    """A TCP relay on 127.0.0.1 in front of the S3 server. ``cut()`` drops every open
    connection and resets new ones (the object store has gone away); ``restore()`` brings it
    back. ``cut_after_writes(n)`` cuts it when the n-th PUT request arrives."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self.listener.getsockname()[1])
        self.down = threading.Event()
        self.closing = False
        self.puts = 0
        self.cut_at: int | None = None
        self._lock = threading.Lock()
        self._open: set[socket.socket] = set()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self.down.set()
        with self._lock:
            for s in list(self._open):
                _reset(s)
            self._open.clear()

    def restore(self) -> None:
        self.cut_at = None
        self.down.clear()

    def cut_after_writes(self, n: int) -> None:
        with self._lock:
            self.cut_at = self.puts + n

    def close(self) -> None:
        self.cut()
        self.closing = True
        with socket.create_connection(("127.0.0.1", self.port)):
            pass  # wakes the accept loop, which sees ``closing`` and returns
        self._thread.join()
        self.listener.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            if self.closing:
                client.close()
                return
            if self.down.is_set():
                _reset(client)
                continue
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            with self._lock:
                self._open.update((client, upstream))
            threading.Thread(target=self._pipe, args=(client, upstream, True), daemon=True).start()
            threading.Thread(target=self._pipe, args=(upstream, client, False), daemon=True).start()

    def _pipe(self, source: socket.socket, sink: socket.socket, outbound: bool) -> None:
        try:
            while data := source.recv(65536):
                if outbound and self._counts_as_cut(data):
                    self.cut()
                    return
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with self._lock:
                for s in (source, sink):
                    if s in self._open:
                        self._open.discard(s)
                        _reset(s)

    def _counts_as_cut(self, data: bytes) -> bool:
        with self._lock:
            self.puts += data.count(b"PUT /")
            return self.cut_at is not None and self.puts >= self.cut_at


def _reset(s: socket.socket) -> None:
    """Close with RST, as a crashed server or a dropped network does."""
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    except OSError:
        pass


@pytest.fixture
def relay(s3_server: S3Server) -> Iterator[Relay]:
    port = int(s3_server.endpoint.rsplit(":", 1)[1])
    r = Relay(port)
    wait_until_listening(r.port)
    yield r
    r.close()


@pytest.fixture
def make_store(tmp_path: Any) -> Iterator[MakeStore]:
    """Open local stores (default folder: tmp_path/lance); all are closed after the test."""
    opened: list[LanceDBStore] = []

    def make(**options: Any) -> LanceDBStore:
        options.setdefault("path", tmp_path / "lance")
        store = LanceDBStore(LanceDBOptions(**options))
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()
