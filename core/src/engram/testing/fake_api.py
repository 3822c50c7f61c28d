"""``FakeEmbeddingsApi``: a local HTTP server for testing an API embedder through its real SDK.

Only the network edge is faked: the SDK under test sends real HTTP to 127.0.0.1, and a subclass
answers in the provider's wire format (``embeddings`` for a request, ``auth_error``,
``error_body`` and ``not_found`` for its error bodies). This base does the rest, the same for
every provider:

- tests script failures with ``enqueue(Reply(...))`` (a status with headers such as
  ``Retry-After``, a malformed body, a delay longer than the client's timeout) or ``down()``;
- every request is kept in ``requests`` (``Seen``), the key itself never: only whether the right
  one came as ``Authorization: Bearer <key>``;
- the socket listens before ``start()`` returns (nothing to wait for), and ``stop()`` closes
  open keep-alive connections so no handler thread outlives the test.

Vectors should be deterministic and similarity-preserving: ``hash_vectors`` gives engram's
feature-hashing embedder's, so the same text always gets the same vector.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import socket
import threading
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, ClassVar, Self

import numpy as np

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions

_WORDS = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """A fake server's token count: words and punctuation marks (at most the UTF-8 size)."""
    return len(_WORDS.findall(text))


def hash_vectors(texts: list[str], dimension: int) -> list[list[float]]:
    return HashEmbedder(HashEmbedderOptions(dimension=dimension)).embed_batch(texts, "document")


def encode_vector(vector: list[float], encoding: str | None) -> Any:
    """A vector as the wire carries it: a list of floats, or base64 of little-endian float32."""
    if encoding == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return vector


@dataclass(frozen=True)
class Reply:
    """A scripted answer. ``status`` 200 with no ``body`` answers normally (after ``delay``);
    any other status sends the API's error body for it (or ``body`` when given)."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0


@dataclass
class Seen:
    """One request as the server saw it. The key itself is not kept: only whether it came."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    auth_sent: bool
    auth_ok: bool
    status: int = 0
    scripted: bool = False


class FakeEmbeddingsApi(ABC):
    """A threaded HTTP server; use as a context manager or call ``start()`` / ``stop()``."""

    path: ClassVar[str] = "/v1/embeddings"

    def __init__(
        self,
        api_key: str,
        *,
        max_inputs: int,
        token_counter: Callable[[str], int] = count_tokens,
    ) -> None:
        self.api_key = api_key
        self.max_inputs = max_inputs
        self.token_counter = token_counter
        self.requests: list[Seen] = []
        self._script: deque[Reply] = deque()
        self._down: Reply | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self))
        self._server.daemon_threads = True
        self._server.block_on_close = False
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- the provider's wire format ------------------------------------------------------------
    @abstractmethod
    def embeddings(self, body: Any) -> tuple[int, bytes]:
        """(status, body) for an authorised request to ``path`` with this JSON body."""

    @abstractmethod
    def auth_error(self, seen: Seen) -> bytes:
        """The 401 body for a missing or wrong key."""

    @abstractmethod
    def error_body(self, status: int) -> bytes:
        """The body the API sends with ``status`` (a scripted failure)."""

    @abstractmethod
    def not_found(self, seen: Seen) -> bytes:
        """The 404 body for a request to another path or with another method."""

    # -- control --------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The ``base_url`` to give a client (ends in ``/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        with self._lock:
            for conn in self._connections:
                with contextlib.suppress(OSError):
                    conn.shutdown(socket.SHUT_RDWR)
        self._server.server_close()
        self._thread.join()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def enqueue(self, *replies: Reply) -> None:
        """Answer the next requests with these replies, in order; then answer normally."""
        with self._lock:
            self._script.extend(replies)

    def down(self, status: int = 503, headers: dict[str, str] | None = None) -> None:
        """Answer every request with ``status`` until ``up()``."""
        with self._lock:
            self._down = Reply(status=status, headers=dict(headers or {}))

    def up(self) -> None:
        with self._lock:
            self._down = None

    def clear(self) -> None:
        """Forget the requests seen so far."""
        with self._lock:
            self.requests.clear()

    # -- what was seen --------------------------------------------------------------------------
    def embedded_inputs(self) -> list[str]:
        """Every input text of the requests answered normally (200, not scripted), in order."""
        with self._lock:
            seen = list(self.requests)
        out: list[str] = []
        for request in seen:
            if request.status == 200 and not request.scripted and isinstance(request.body, dict):
                texts = request.body.get("input")
                out.extend([texts] if isinstance(texts, str) else list(texts or []))
        return out

    def statuses(self) -> list[int]:
        with self._lock:
            return [r.status for r in self.requests]

    # -- answering ------------------------------------------------------------------------------
    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes, float]:
        """(status, headers, body, delay) for one request."""
        scripted = self._next_reply()
        seen.scripted = scripted is not None
        if scripted is not None and (scripted.status != 200 or scripted.body is not None):
            body = scripted.body
            if body is None:
                body = self.error_body(scripted.status)
            return scripted.status, dict(scripted.headers), body, scripted.delay
        delay = scripted.delay if scripted is not None else 0.0
        headers = dict(scripted.headers) if scripted is not None else {}
        if seen.method != "POST" or seen.path != self.path:
            return 404, headers, self.not_found(seen), 0.0
        if not seen.auth_ok:
            return 401, headers, self.auth_error(seen), delay
        status, body = self.embeddings(seen.body)
        return status, headers, body, delay

    def _next_reply(self) -> Reply | None:
        with self._lock:
            if self._script:
                return self._script.popleft()
            return self._down

    def _remember(self, seen: Seen) -> None:
        with self._lock:
            self.requests.append(seen)

    def _track(self, conn: socket.socket, opened: bool) -> None:
        """Open connections, so ``stop()`` can close them and their threads end."""
        with self._lock:
            if opened:
                self._connections.add(conn)
            else:
                self._connections.discard(conn)


def _handler(fake: FakeEmbeddingsApi) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            fake._track(self.connection, opened=True)

        def finish(self) -> None:
            fake._track(self.connection, opened=False)
            with contextlib.suppress(OSError):
                super().finish()

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``requests`` instead."""

        def do_POST(self) -> None:
            self._serve("POST")

        def do_GET(self) -> None:
            self._serve("GET")

        def _serve(self, method: str) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                body: Any = json.loads(raw) if raw else None
            except ValueError:
                body = raw.decode("utf-8", "replace")
            auth = self.headers.get("Authorization")
            headers = {
                k.lower(): v for k, v in self.headers.items() if k.lower() != "authorization"
            }
            seen = Seen(
                method=method,
                path=self.path,
                headers=headers,
                body=body,
                auth_sent=bool(auth),
                auth_ok=auth == f"Bearer {fake.api_key}",
            )
            fake._remember(seen)
            status, extra, payload, delay = fake.answer(seen)
            seen.status = status
            if delay and fake._stopping.wait(delay):
                return
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.send_header("x-request-id", f"req_{len(fake.requests)}")
                for name, value in extra.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)
            except OSError:
                self.close_connection = True

    return Handler
