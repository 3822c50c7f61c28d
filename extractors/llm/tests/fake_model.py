"""A local OpenAI-compatible chat completions server for tests, on pytest-httpserver.

It speaks the real wire format (``POST /v1/chat/completions``, ``Authorization: Bearer``,
``{"choices": [{"message": {"role": "assistant", "content"}}], "usage": {...}}``, errors as
``{"error": {"message", "type", "param", "code"}}``) to the real ``openai`` SDK. Tests script
replies (a status, a body, a content, a delay) or let a small deterministic fake model answer:
it reads the task from the system prompt and answers with what engram's offline ``rules``
extractor makes of the same input, so the answers are meaningful and repeatable.
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from engram.default_plugins.rules_extractor import RulesExtractor
from engram.models import ExtractedMemory, KnownMemory, Message
from engram_llm import LLMExtractor

PATH = "/v1/chat/completions"
KEY = "sk-fake-chat-key-0000"
Build = Callable[..., LLMExtractor]  # the `build` fixture: providers (servers or dicts) → extractor


@dataclass(frozen=True)
class Reply:
    """A scripted answer: an HTTP ``status`` (with OpenAI's error body unless ``body``), or,
    with status 200, the assistant message ``content`` instead of the fake model's."""

    status: int = 200
    content: str | None = None
    body: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0


@dataclass
class Seen:
    body: dict[str, Any]
    auth_ok: bool
    status: int = 0


class FakeChat:
    """Start with ``with FakeChat() as server:``; ``server.url`` is the SDK's ``base_url``."""

    def __init__(self, api_key: str = KEY, *, always: Reply | None = None):
        self.api_key = api_key
        self.always = always
        self.script: deque[Reply] = deque()
        self.requests: list[Seen] = []
        self._server = HTTPServer(host="127.0.0.1", threaded=True)
        self._server.expect_request(PATH, method="POST").respond_with_handler(self._handle)
        self._lock = threading.Lock()

    def __enter__(self) -> FakeChat:
        self._server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.clear()
        if self._server.is_running():
            self._server.stop()

    @property
    def url(self) -> str:
        return self._server.url_for("/v1")

    def enqueue(self, *replies: Reply) -> None:
        self.script.extend(replies)

    # -- the wire ------------------------------------------------------------------------------
    def _handle(self, request: Request) -> Response:
        body = json.loads(request.get_data(as_text=True) or "{}")
        auth_ok = request.headers.get("Authorization") == f"Bearer {self.api_key}"
        seen = Seen(body=body, auth_ok=auth_ok)
        with self._lock:
            self.requests.append(seen)
            reply = self.script.popleft() if self.script else self.always
        if reply is not None and reply.delay:
            threading.Event().wait(reply.delay)
        if not auth_ok:
            seen.status = 401
            return _error(401, "Incorrect API key provided: sk-fa***0000.", "invalid_api_key")
        if reply is not None and reply.status != 200:
            seen.status = reply.status
            if reply.body is not None:
                return Response(reply.body, status=reply.status, headers=reply.headers)
            return _error(reply.status, f"HTTP {reply.status}", None, reply.headers)
        content = reply.content if reply is not None and reply.content is not None else None
        if content is None:
            content = json.dumps(answer(body))
        seen.status = 200
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages", []))
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body.get("model", "fake"),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": len(prompt.split()),
                "completion_tokens": len(content.split()),
                "total_tokens": len(prompt.split()) + len(content.split()),
            },
        }
        return Response(json.dumps(payload), status=200, content_type="application/json")

    def prompts(self) -> list[str]:
        """Every prompt text the server received, in order."""
        return [str(m.get("content", "")) for seen in self.requests for m in seen.body["messages"]]


def _error(
    status: int, message: str, code: str | None, headers: dict[str, str] | None = None
) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": None, "code": code}
    return Response(
        json.dumps({"error": error}),
        status=status,
        headers=headers or {},
        content_type="application/json",
    )


# --------------------------------------------------------------------------- the fake model


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """What the fake model answers: the task is read from the system prompt, the data from
    the JSON in the user prompt."""
    messages = body.get("messages", [])
    system = str(messages[0]["content"]) if messages else ""
    user = str(messages[-1]["content"]) if messages else ""
    rules = RulesExtractor()
    if system.startswith("You judge whether"):
        new_part, stored_part = user.split("\nStored memories:\n", 1)
        new = json.loads(new_part.removeprefix("New memory:\n"))
        stored = [KnownMemory(**item) for item in json.loads(stored_part)]
        memory = ExtractedMemory(type=new["type"], content=new["content"])
        return {"stale": rules.find_contradictions(memory, stored)}
    if system.startswith("You distil"):
        summaries = json.loads(user.split("\n", 1)[1])
        if not summaries:
            return {"learned_pattern": None}
        first = summaries[0]["content"].split(". ")[0]
        return {
            "learned_pattern": {
                "title": "A recurring lesson",
                "content": f"Across {len(summaries)} sessions: {first}.",
                "tags": ["condensed"],
            }
        }
    data = json.loads(user.split("\n", 1)[1])
    conversation = [Message(role=m["role"], content=m["content"]) for m in data]
    mode = "summary" if "summarise" in system else "init" if "project's files" in system else None
    found = rules.extract(conversation, mode or "normal")
    return {"memories": [m.model_dump() for m in found]}
