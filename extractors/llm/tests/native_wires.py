"""Fake Anthropic and Gemini APIs for the llm extractor's native providers, driven by the real
``anthropic`` and ``google-genai`` SDKs.

Each speaks its protocol's wire format, from the public API references:

- ``AnthropicMessages``: ``POST /v1/messages`` with the key in ``x-api-key`` or (as the
  ``anthropic`` 2.x SDK sends it) ``Authorization: Bearer``, and an ``anthropic-version``
  header; answers ``{"type": "message", "content": [blocks], "usage": {"input_tokens",
  "output_tokens"}, "stop_reason"}``, a ``tool_use`` block when the request forces a tool,
  else a ``text`` block; errors as ``{"type": "error", "error": {"type", "message"}}`` (401
  ``authentication_error``, 429 ``rate_limit_error``, 529 ``overloaded_error``).
- ``GeminiGenerateContent``: ``POST /v1/models/{model}:generateContent`` (the SDK's default
  version) with the key in ``x-goog-api-key``; answers ``{"candidates": [{"content": {"parts":
  [{"text"}], "role": "model"}, "finishReason"}], "usageMetadata": {"promptTokenCount",
  "candidatesTokenCount", "totalTokenCount"}}``; errors as ``{"error": {"code", "message",
  "status"}}``, a wrong key as the real API sends it: HTTP 400 ``INVALID_ARGUMENT`` with reason
  ``API_KEY_INVALID`` (403 ``PERMISSION_DENIED`` for none).

The answers come from the same fake model as the OpenAI wire (``fake_model.answer``), so every
protocol answers a task alike. ``NativeApi`` is ``FakeApi`` with the protocol's key header
accepted like ``Authorization: Bearer`` (the key is still never kept in ``Seen``).
"""

from __future__ import annotations

import json
from typing import Any, Protocol

from werkzeug import Request, Response

from fake_apis import FakeApi, Reply, Seen, Wire
from fake_apis.embeddings import count_tokens

ANTHROPIC_KEY = "sk-ant-fake-key-0000"
GOOGLE_KEY = "AIza-fake-gemini-key-0000"


def reported_tokens(text: str) -> int:
    """The prompt or answer tokens the fakes report in their usage fields."""
    return max(1, count_tokens(text))


def _as_openai(system: str, user: str) -> dict[str, Any]:
    """The request as the fake model reads it (an OpenAI chat body)."""
    return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}


class AnthropicMessages:
    """Anthropic's Messages API."""

    path = "/v1/messages"
    key_header = "x-api-key"
    auth_status = 401

    def __init__(self, model: Any, api_key: str = ANTHROPIC_KEY) -> None:
        self.model = model
        self.api_key = api_key

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        problem = _anthropic_problem(body)
        if problem:
            return 400, _anthropic_error("invalid_request_error", problem)
        system = body.get("system", "")
        user = body["messages"][-1]["content"]
        forced = (body.get("tool_choice") or {}).get("name")
        if reply is not None and reply.content is not None:
            block: dict[str, Any] = {"type": "text", "text": reply.content}
        else:
            data = self.model(_as_openai(system, user))
            if forced:
                block = {"type": "tool_use", "id": "toolu_fake", "name": forced, "input": data}
            else:
                block = {"type": "text", "text": json.dumps(data)}
        shown = block.get("text") or json.dumps(block.get("input"))
        payload = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": body["model"],
            "content": [block],
            "stop_reason": "tool_use" if block["type"] == "tool_use" else "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": reported_tokens(system + user),
                "output_tokens": reported_tokens(shown),
            },
        }
        return 200, json.dumps(payload).encode()

    def auth_error(self, seen: Seen) -> bytes:
        return _anthropic_error("authentication_error", "invalid x-api-key")

    def error_body(self, status: int) -> bytes:
        kinds = {429: "rate_limit_error", 529: "overloaded_error"}
        kind = kinds.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return _anthropic_error(kind, f"HTTP {status}")

    def not_found(self, seen: Seen) -> bytes:
        return _anthropic_error("not_found_error", f"{seen.method} {seen.path} not found")


def _anthropic_problem(body: Any) -> str | None:
    if not isinstance(body, dict) or not isinstance(body.get("model"), str):
        return "model: Field required"
    if not isinstance(body.get("max_tokens"), int):
        return "max_tokens: Field required"
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages or messages[0].get("role") != "user":
        return "messages: the first message must use the user role"
    if any(m.get("role") == "system" for m in messages):
        return "messages: system is a top-level field, not a role"
    choice = body.get("tool_choice")
    if choice is not None:
        names = {t.get("name") for t in body.get("tools") or []}
        if choice.get("type") == "tool" and choice.get("name") not in names:
            return "tool_choice: the tool is not in tools"
        for tool in body.get("tools") or []:
            if (tool.get("input_schema") or {}).get("type") != "object":
                return "tools.0.input_schema: type must be object"
    return None


def _anthropic_error(kind: str, message: str) -> bytes:
    return json.dumps({"type": "error", "error": {"type": kind, "message": message}}).encode()


class GeminiGenerateContent:
    """The Gemini API's ``generateContent`` for one model."""

    key_header = "x-goog-api-key"
    auth_status = 400

    def __init__(self, model: Any, api_key: str = GOOGLE_KEY, name: str = "gemini-2.5-flash"):
        self.model = model
        self.api_key = api_key
        self.path = f"/v1/models/{name}:generateContent"  # the SDK's default version

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        if not isinstance(body, dict) or not isinstance(body.get("contents"), list):
            return 400, _gemini_error(400, "contents is required", "INVALID_ARGUMENT")
        system = " ".join(p["text"] for p in body.get("systemInstruction", {}).get("parts", []))
        user = " ".join(p["text"] for c in body["contents"] for p in c.get("parts", []))
        config = body.get("generationConfig") or {}
        if "responseJsonSchema" in config and config.get("responseMimeType") != (
            "application/json"
        ):
            needs = "responseJsonSchema needs responseMimeType application/json"
            return 400, _gemini_error(400, needs, "INVALID_ARGUMENT")
        if reply is not None and reply.content is not None:
            text = reply.content
        else:
            text = json.dumps(self.model(_as_openai(system, user)))
        prompt, answered = reported_tokens(system + user), reported_tokens(text)
        payload = {
            "candidates": [
                {
                    "content": {"parts": [{"text": text}], "role": "model"},
                    "finishReason": "STOP",
                    "index": 0,
                }
            ],
            "usageMetadata": {
                "promptTokenCount": prompt,
                "candidatesTokenCount": answered,
                "totalTokenCount": prompt + answered,
            },
            "modelVersion": "gemini-2.5-flash",
            "responseId": "fake",
        }
        return 200, json.dumps(payload).encode()

    def auth_error(self, seen: Seen) -> bytes:
        if not seen.auth_sent:
            return _gemini_error(
                403, "Method doesn't allow unregistered callers.", "PERMISSION_DENIED"
            )
        invalid = "API key not valid. Please pass a valid API key."
        error = json.loads(_gemini_error(400, invalid, "INVALID_ARGUMENT"))
        error["error"]["details"] = [
            {"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID"}
        ]
        return json.dumps(error).encode()

    def error_body(self, status: int) -> bytes:
        names = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE"}
        return _gemini_error(status, f"HTTP {status}", names.get(status, "INVALID_ARGUMENT"))

    def not_found(self, seen: Seen) -> bytes:
        return _gemini_error(404, f"{seen.path} is not found", "NOT_FOUND")


def _gemini_error(code: int, message: str, status: str) -> bytes:
    return json.dumps({"error": {"code": code, "message": message, "status": status}}).encode()


class NativeWire(Wire, Protocol):
    """A wire whose key may come in its own header, refused with its own status."""

    key_header: str
    auth_status: int


class NativeApi(FakeApi[NativeWire]):
    """``FakeApi`` for a protocol whose key may come in its own header (``wire.key_header``), and
    whose base URL is the host (the SDKs add the version to the path)."""

    @property
    def url(self) -> str:
        return self._server.url_for("/").rstrip("/")

    def _respond(self, request: Request) -> Response:
        # FakeApi checks `Authorization: Bearer <key>`: the protocol's header is moved there, so
        # the key is checked the same way and, like a bearer token, never kept in `Seen`.
        header = "HTTP_" + self.wire.key_header.upper().replace("-", "_")
        key = request.environ.pop(header, None)
        if key is not None:
            request.environ["HTTP_AUTHORIZATION"] = f"Bearer {key}"
        return super()._respond(request)

    def _answer(self, seen: Seen, reply: Reply | None) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = super()._answer(seen, reply)
        if status == 401 and reply is None and self.wire.auth_status != 401:
            # Gemini: a wrong key is a 400, none at all a 403
            status = self.wire.auth_status if seen.auth_sent else 403
        return status, headers, body
