"""``FakeApi``: a provider's HTTP API on loopback, for testing a client through its real SDK.

The HTTP plumbing is pytest-httpserver's (a threaded werkzeug server); this module adds what
every provider's fake needs, whatever its wire format:

- tests script answers with ``enqueue(Reply(...))`` (a status with headers such as
  ``Retry-After``, a malformed body, a delay longer than the client's timeout) or set ``always``
  (``down()`` / ``up()``) for every answer until changed;
- every request is kept in ``requests`` (``Seen``), the key itself never: only whether the right
  one came as ``Authorization: Bearer <key>``;
- the socket listens before ``start()`` returns; ``stop()`` wakes delayed answers, so no handler
  sleeps past the test, and ``check()`` re-raises what a handler raised.

The provider's part is a ``Wire``: the path it serves, its key, its answers and error bodies.
"""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any, Generic, Protocol, Self, TypeVar

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response


@dataclass(frozen=True)
class Reply:
    """A scripted answer. Any status but 200, or a ``body``, is sent as it is (the wire's error
    body for the status when no ``body``); a plain 200 is answered by the wire, with ``content``
    in place of its own where it has one (the chat wire: the assistant's message). ``delay``
    holds the answer back that many seconds."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes | None = None
    delay: float = 0.0
    content: str | None = None


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


class Wire(Protocol):
    """A provider's wire format: what ``FakeApi`` asks of it."""

    path: str  # the one endpoint, e.g. "/v1/embeddings"
    api_key: str

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        """(status, body) for an authorised POST to ``path`` with this JSON body."""
        ...

    def auth_error(self, seen: Seen) -> bytes:
        """The 401 body for a missing or wrong key."""
        ...

    def error_body(self, status: int) -> bytes:
        """The body the API sends with ``status`` (a scripted failure)."""
        ...

    def not_found(self, seen: Seen) -> bytes:
        """The 404 body for a request to another path or with another method."""
        ...


W = TypeVar("W", bound=Wire)


class _Server(HTTPServer):
    """pytest-httpserver's server, polling for shutdown every 50 ms instead of 500."""

    def thread_target(self) -> None:
        assert self.server is not None
        self.server.serve_forever(poll_interval=0.05)


class FakeApi(Generic[W]):
    """One provider API on 127.0.0.1; the ``fake_api`` fixture starts and stops it, or use it as
    a context manager."""

    def __init__(self, wire: W) -> None:
        self.wire = wire
        self.requests: list[Seen] = []
        self.always: Reply | None = None
        self._script: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server = _Server(host="127.0.0.1", threaded=True)
        self._server.expect_request(re.compile(".*")).respond_with_handler(self._respond)

    # -- control ------------------------------------------------------------------------------
    @property
    def api_key(self) -> str:
        return self.wire.api_key

    @api_key.setter
    def api_key(self, value: str) -> None:
        self.wire.api_key = value

    @property
    def url(self) -> str:
        """The ``base_url`` to give a client (ends in ``/v1``)."""
        return self._server.url_for("/v1")

    def start(self) -> Self:
        self._server.start()
        return self

    def stop(self) -> None:
        """Stop listening (the port refuses connections from now on); idempotent."""
        self._stopping.set()
        if self._server.is_running():
            self._server.stop()

    def check(self) -> None:
        """Re-raise the first exception a handler raised (a bug in the fake, not the client)."""
        self._server.check_handler_errors()

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
        """Answer the next requests with these replies, in order; then as ``always`` says."""
        with self._lock:
            self._script.extend(replies)

    def down(self, status: int = 503, headers: dict[str, str] | None = None) -> None:
        """Answer every request with ``status`` until ``up()``."""
        self.always = Reply(status=status, headers=dict(headers or {}))

    def up(self) -> None:
        self.always = None

    def clear(self) -> None:
        """Forget the requests seen so far."""
        with self._lock:
            self.requests.clear()

    def statuses(self) -> list[int]:
        with self._lock:
            return [r.status for r in self.requests]

    # -- answering ----------------------------------------------------------------------------
    def _respond(self, request: Request) -> Response:
        seen = _seen(request, self.wire.api_key)
        with self._lock:
            self.requests.append(seen)
            number = len(self.requests)
            reply = self._script.popleft() if self._script else self.always
        seen.scripted = reply is not None
        status, headers, body = self._answer(seen, reply)
        seen.status = status
        if reply is not None and reply.delay:
            self._stopping.wait(reply.delay)
        response = Response(body, status=status, content_type="application/json")
        response.headers["x-request-id"] = f"req_{number}"
        for name, value in headers.items():
            response.headers[name] = value
        return response

    def _answer(self, seen: Seen, reply: Reply | None) -> tuple[int, dict[str, str], bytes]:
        headers = dict(reply.headers) if reply is not None else {}
        if reply is not None and (reply.status != 200 or reply.body is not None):
            body = reply.body if reply.body is not None else self.wire.error_body(reply.status)
            return reply.status, headers, body
        if seen.method != "POST" or seen.path != self.wire.path:
            return 404, headers, self.wire.not_found(seen)
        if not seen.auth_ok:
            return 401, headers, self.wire.auth_error(seen)
        status, body = self.wire.answer(seen.body, reply)
        return status, headers, body


def _seen(request: Request, api_key: str) -> Seen:
    raw = request.get_data()
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = raw.decode("utf-8", "replace")
    auth = request.headers.get("Authorization")
    return Seen(
        method=request.method,
        path=request.path,
        headers={k.lower(): v for k, v in request.headers.items() if k.lower() != "authorization"},
        body=body,
        auth_sent=bool(auth),
        auth_ok=auth == f"Bearer {api_key}",
    )
