"""OpenAI's wire format: the embeddings API, and chat completions (OpenAI and every compatible
server the llm extractor talks to).

``OpenAIEmbeddings`` answers ``POST /v1/embeddings`` as the real API does: the request JSON
(``input``, ``model``, ``dimensions``, ``encoding_format`` and ``user``; anything else is
refused), answers ``{"object": "list", "data": [{"object": "embedding", "index", "embedding"}],
"model", "usage": {"prompt_tokens", "total_tokens"}}`` with base64 float32 vectors when asked (the
SDK's default), and 400 over the API's limits, which can be lowered to test batching.

``ChatCompletions`` answers ``POST /v1/chat/completions`` with ``{"choices": [{"message":
{"role": "assistant", "content"}}], "usage": {...}}``; the content is what its ``model`` (a
function of the request body) returns, as JSON, unless a ``Reply`` gives it.

Both send errors as ``{"error": {"message", "type", "param", "code"}}``: 401 for a wrong key.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_apis.embeddings import count_tokens, encode_vector, hash_vectors, input_texts
from fake_apis.server import Reply, Seen

NATIVE = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}
FIXED = {"text-embedding-ada-002": 1536}
_ALLOWED_FIELDS = {"input", "model", "dimensions", "encoding_format", "user"}
ChatModel = Callable[[dict[str, Any]], Any]


class OpenAIErrors:
    """OpenAI's error bodies."""

    api_key: str

    def auth_error(self, seen: Seen) -> bytes:
        # The real API quotes the start and end of the key it got; so does the fake (of the right
        # key), so tests can prove engram never repeats this message.
        masked = f"{self.api_key[:3]}{'*' * 20}{self.api_key[-4:]}"
        if not seen.auth_sent:
            return _error_json(
                "You didn't provide an API key.", "invalid_request_error", None, "missing_api_key"
            )
        return _error_json(
            f"Incorrect API key provided: {masked}. You can find your API key at "
            "https://platform.openai.com/account/api-keys.",
            "invalid_request_error",
            None,
            "invalid_api_key",
        )

    def error_body(self, status: int) -> bytes:
        if status == 429:
            return _error_json(
                "Rate limit reached for requests. Please try again in 20ms.",
                "requests",
                None,
                "rate_limit_exceeded",
            )
        if status >= 500:
            return _error_json(
                "The server had an error while processing your request. Sorry about that!",
                "server_error",
                None,
                None,
            )
        return _error_json(f"HTTP {status}", "invalid_request_error", None, None)

    def not_found(self, seen: Seen) -> bytes:
        return _error(f"Invalid URL ({seen.method} {seen.path})", code=None)


class OpenAIEmbeddings(OpenAIErrors):
    """The OpenAI embeddings API; its limits can be lowered to test batching."""

    path = "/v1/embeddings"

    def __init__(
        self,
        api_key: str = "sk-test-fake-openai-key-0000",
        *,
        max_inputs: int = 2048,
        max_request_tokens: int = 300_000,
        max_input_tokens: int = 8192,
        token_counter: Callable[[str], int] = count_tokens,
        base64_answers: bool = True,
        reverse_data: bool = False,
    ) -> None:
        self.api_key = api_key
        self.max_inputs = max_inputs
        self.max_request_tokens = max_request_tokens
        self.max_input_tokens = max_input_tokens
        self.token_counter = token_counter
        self.base64_answers = base64_answers
        self.reverse_data = reverse_data

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        problem = self._bad_request(body)
        if problem is not None:
            return 400, problem
        texts = input_texts(body) or []
        counts = [self.token_counter(t) for t in texts]
        refused = self._over_limits(counts)
        if refused:
            return 400, refused
        dimension = _dimension(body)
        if isinstance(dimension, bytes):
            return 400, dimension
        encoding = body.get("encoding_format", "float") if self.base64_answers else "float"
        if encoding not in ("float", "base64"):
            return 400, _error(f"Invalid value for 'encoding_format': {encoding!r}", "encoding")
        data = [
            {"object": "embedding", "index": i, "embedding": encode_vector(v, encoding)}
            for i, v in enumerate(hash_vectors(texts, dimension))
        ]
        if self.reverse_data:
            data.reverse()
        usage = {"prompt_tokens": sum(counts), "total_tokens": sum(counts)}
        answer = {"object": "list", "data": data, "model": body["model"], "usage": usage}
        return 200, json.dumps(answer).encode()

    def _bad_request(self, body: Any) -> bytes | None:
        """The API's 400 body for a request it cannot take at all, or None."""
        if not isinstance(body, dict):
            return _error("We could not parse the JSON body of your request.", code=None)
        unknown = sorted(set(body) - _ALLOWED_FIELDS)
        if unknown:
            return _error(f"Unrecognized request argument supplied: {unknown[0]}", code=None)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return _error("you must provide a model parameter", param="model")
        texts = input_texts(body)
        if texts is None:
            return _error("'$.input' is invalid. Please check the API reference.", "input")
        if len(texts) > self.max_inputs:
            return _error(
                f"'$.input' is invalid: at most {self.max_inputs} inputs per request", "input"
            )
        if any(t == "" for t in texts):
            return _error("'$.input' is invalid. Please check the API reference.", "input")
        return None

    def _over_limits(self, counts: list[int]) -> bytes | None:
        if max(counts) > self.max_input_tokens:
            return _error(
                f"This model's maximum context length is {self.max_input_tokens} tokens, however "
                f"you requested {max(counts)} tokens. Please reduce your prompt.",
                "input",
            )
        if sum(counts) > self.max_request_tokens:
            return _error(
                f"Requested {sum(counts)} tokens, max {self.max_request_tokens} tokens per request",
                "input",
            )
        return None


class ChatCompletions(OpenAIErrors):
    """An OpenAI-compatible chat completions API whose answers come from ``model``."""

    path = "/v1/chat/completions"

    def __init__(self, model: ChatModel, api_key: str = "sk-fake-chat-key-0000") -> None:
        self.model = model
        self.api_key = api_key

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("model"), str):
            return 400, _error("you must provide a model parameter", param="model")
        if not isinstance(messages, list) or not messages or not all(map(_is_message, messages)):
            return 400, _error("'messages' must be a non-empty list of messages", "messages")
        content = reply.content if reply is not None else None
        if content is None:
            content = json.dumps(self.model(body))
        prompt = sum(len(str(m["content"]).split()) for m in messages)
        completion = len(content.split())
        payload = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 1_700_000_000,
            "model": body["model"],
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": content},
                    "finish_reason": "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
            },
        }
        return 200, json.dumps(payload).encode()


def prompts(seen: list[Seen]) -> list[str]:
    """Every message text of these chat requests, in order."""
    return [str(m.get("content", "")) for s in seen for m in (s.body or {}).get("messages", [])]


def _is_message(message: Any) -> bool:
    if not isinstance(message, dict):
        return False
    return isinstance(message.get("role"), str) and "content" in message


def _dimension(body: dict[str, Any]) -> int | bytes:
    """The vector size the request asks for (the model's own without ``dimensions``), or the
    API's 400 body when the model cannot give it."""
    model = body["model"]
    wanted = body.get("dimensions")
    if wanted is None:
        return NATIVE.get(model) or FIXED.get(model) or 1536
    if model not in NATIVE:
        return _error("This model does not support specifying dimensions.", "dimensions")
    if not isinstance(wanted, int) or not 1 <= wanted <= NATIVE[model]:
        return _error(f"Invalid value for 'dimensions': {wanted!r}", "dimensions")
    return wanted


def _error(message: str, param: str | None = None, *, code: str | None = None) -> bytes:
    return _error_json(message, "invalid_request_error", param, code)


def _error_json(message: str, kind: str, param: str | None, code: str | None) -> bytes:
    error = {"message": message, "type": kind, "param": param, "code": code}
    return json.dumps({"error": error}).encode()
