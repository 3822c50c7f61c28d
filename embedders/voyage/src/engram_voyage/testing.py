"""``FakeVoyage``: a local server that speaks the Voyage AI embeddings wire format, for tests.

It answers ``POST /v1/embeddings`` as the real API does: the request JSON (``input``, ``model``,
``input_type``, ``truncation``, ``output_dimension``, ``output_dtype``, ``encoding_format``;
anything else is refused), answers ``{"object": "list", "data": [{"object": "embedding",
"embedding", "index"}], "model", "usage": {"total_tokens"}}`` with base64 float32 vectors when
asked (the SDK's default), and errors as ``{"detail": "..."}``: 401 for a wrong key, 400 over the
API's limits. Vectors are deterministic and similarity-preserving (engram's feature-hashing
embedder); a ``query`` is embedded with the prompt Voyage puts before queries, a ``document``
with the one for documents, so the two differ as they do for real.

Tests script failures with ``enqueue(Reply(...))`` (a status with headers such as
``Retry-After``, a malformed body, a delay longer than the client's timeout) or ``down()``, and
read every request the server saw in ``requests``. Binds 127.0.0.1 on a free port; the socket
listens before ``start()`` returns, so there is nothing to wait for.
"""

from __future__ import annotations

import base64
import contextlib
import json
import re
import socket
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

import numpy as np

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions

PATH = "/v1/embeddings"
SIZES = (256, 512, 1024, 2048)
# model -> tokens per request (every model: 1024 dims by default, 32,000 tokens per text)
MODELS = {
    "voyage-3.5": 320_000,
    "voyage-3.5-lite": 1_000_000,
    "voyage-3-large": 120_000,
    "voyage-code-3": 120_000,
}
CONTEXT = 32_000
PROMPTS = {
    "query": "Represent the query for retrieving supporting documents: ",
    "document": "Represent the document for retrieval: ",
}
_ALLOWED_FIELDS = {
    "input",
    "model",
    "input_type",
    "truncation",
    "output_dimension",
    "output_dtype",
    "encoding_format",
}
_WORDS = re.compile(r"\w+|[^\w\s]")


def count_tokens(text: str) -> int:
    """The server's token count: words and punctuation marks (always at most the UTF-8 size)."""
    return len(_WORDS.findall(text))


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


class FakeVoyage:
    """A threaded HTTP server; use as a context manager or call ``start()`` / ``stop()``."""

    def __init__(
        self,
        api_key: str = "pa-test-fake-voyage-key-0000",
        *,
        max_inputs: int = 1000,
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

    # -- control --------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        """The ``base_url`` to give a client (ends in ``/v1``)."""
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> FakeVoyage:
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

    def __enter__(self) -> FakeVoyage:
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

    def answer(self, seen: Seen) -> tuple[int, dict[str, str], bytes, float]:
        """(status, headers, body, delay) for one request."""
        scripted = self._next_reply()
        seen.scripted = scripted is not None
        if scripted is not None and (scripted.status != 200 or scripted.body is not None):
            body = scripted.body
            if body is None:
                body = _error_body(scripted.status)
            return scripted.status, dict(scripted.headers), body, scripted.delay
        delay = scripted.delay if scripted is not None else 0.0
        headers = dict(scripted.headers) if scripted is not None else {}
        if seen.method != "POST" or seen.path != PATH:
            return 404, headers, _detail("Not Found"), 0.0
        if not seen.auth_ok:
            return 401, headers, _auth_error(seen, self.api_key), delay
        status, body = self._embeddings(seen.body)
        return status, headers, body, delay

    def _embeddings(self, body: Any) -> tuple[int, bytes]:
        if not isinstance(body, dict):
            return 400, _detail("Request body is not valid JSON.")
        unknown = sorted(set(body) - _ALLOWED_FIELDS)
        if unknown:
            return 422, _detail(f"Unexpected argument: {unknown[0]}")
        model = body.get("model")
        if model not in MODELS:
            return 400, _detail(f"Model {model} is not supported. Supported: {', '.join(MODELS)}")
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, _detail("input must be a string or a non-empty list of strings.")
        if len(texts) > self.max_inputs:
            return 400, _detail(
                f"The batch size limit is {self.max_inputs}. Your batch size is {len(texts)}."
            )
        if any(t == "" for t in texts):
            return 400, _detail("input cannot contain empty strings.")
        input_type = body.get("input_type")
        if input_type not in (None, "query", "document"):
            return 400, _detail(f"input_type must be query, document or null, got {input_type}.")
        truncation = body.get("truncation", True)
        counts = [self.token_counter(t) for t in texts]
        if not truncation and max(counts) > CONTEXT:
            return 400, _detail(
                f"Input {counts.index(max(counts))} has {max(counts)} tokens, more than the "
                f"context length {CONTEXT}; enable truncation or shorten it."
            )
        counts = [min(c, CONTEXT) for c in counts]
        if sum(counts) > MODELS[model]:
            return 400, _detail(
                f"Request to model '{model}' failed. The max allowed tokens per submitted batch "
                f"is {MODELS[model]}. Your batch has {sum(counts)} tokens after truncation."
            )
        dimension = body.get("output_dimension") or 1024
        if dimension not in SIZES:
            return 400, _detail(f"output_dimension must be one of {SIZES}, got {dimension}.")
        if body.get("output_dtype") not in (None, "float"):
            return 400, _detail("this server only speaks output_dtype float.")
        encoding = body.get("encoding_format")
        if encoding not in (None, "base64"):
            return 400, _detail(f"encoding_format must be null or base64, got {encoding}.")
        prompt = PROMPTS.get(input_type or "", "")
        vectors = HashEmbedder(HashEmbedderOptions(dimension=dimension)).embed_batch(
            [prompt + t for t in texts], "document"
        )
        data = [
            {"object": "embedding", "embedding": _encode(v, encoding), "index": i}
            for i, v in enumerate(vectors)
        ]
        answer = {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"total_tokens": sum(counts)},
        }
        return 200, json.dumps(answer).encode()


def _encode(vector: list[float], encoding: str | None) -> Any:
    if encoding == "base64":
        return base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii")
    return vector


def _detail(message: str) -> bytes:
    return json.dumps({"detail": message}).encode()


def _auth_error(seen: Seen, key: str) -> bytes:
    if not seen.auth_sent:
        return _detail("No API key provided.")
    return _detail("Provided API key is invalid.")


def _error_body(status: int) -> bytes:
    if status == 429:
        return _detail(
            "You have not yet added your payment method in the billing page and will have "
            "reduced rate limits. Please try again later."
        )
    if status >= 500:
        return _detail("The server failed to process the request.")
    return _detail(f"HTTP {status}")


def _handler(fake: FakeVoyage) -> type[BaseHTTPRequestHandler]:
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
