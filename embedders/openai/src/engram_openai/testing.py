"""``FakeOpenAI``: a local server that speaks the OpenAI embeddings wire format, for tests.

It answers ``POST /v1/embeddings`` as the real API does: the request JSON (``input``, ``model``,
``dimensions``, ``encoding_format`` and ``user``; anything else is refused), answers
``{"object": "list", "data": [{"object": "embedding", "index", "embedding"}], "model",
"usage": {"prompt_tokens", "total_tokens"}}`` with base64 float32 vectors when asked (the SDK's
default), and errors as ``{"error": {"message", "type", "param", "code"}}``: 401 for a wrong
key, 400 over the API's limits. Vectors are deterministic and similarity-preserving (engram's
feature-hashing embedder), so the same text always gets the same vector.

The server itself (scripted failures, recorded requests, start and stop) is
``engram.testing.fake_api.FakeEmbeddingsApi``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engram.testing.fake_api import (
    FakeEmbeddingsApi,
    Reply,
    Seen,
    count_tokens,
    encode_vector,
    hash_vectors,
)

__all__ = ["FakeOpenAI", "Reply", "Seen", "count_tokens"]

NATIVE = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072}
FIXED = {"text-embedding-ada-002": 1536}
_ALLOWED_FIELDS = {"input", "model", "dimensions", "encoding_format", "user"}


class FakeOpenAI(FakeEmbeddingsApi):
    """The OpenAI embeddings API on loopback; its limits can be lowered to test batching."""

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
        super().__init__(api_key, max_inputs=max_inputs, token_counter=token_counter)
        self.max_request_tokens = max_request_tokens
        self.max_input_tokens = max_input_tokens
        self.base64_answers = base64_answers
        self.reverse_data = reverse_data

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

    def embeddings(self, body: Any) -> tuple[int, bytes]:
        if not isinstance(body, dict):
            return 400, _error("We could not parse the JSON body of your request.", code=None)
        unknown = sorted(set(body) - _ALLOWED_FIELDS)
        if unknown:
            return 400, _error(f"Unrecognized request argument supplied: {unknown[0]}", code=None)
        model = body.get("model")
        if not isinstance(model, str) or not model:
            return 400, _error("you must provide a model parameter", param="model")
        texts = body.get("input")
        if isinstance(texts, str):
            texts = [texts]
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            return 400, _error("'$.input' is invalid. Please check the API reference.", "input")
        if len(texts) > self.max_inputs:
            return 400, _error(
                f"'$.input' is invalid: at most {self.max_inputs} inputs per request", "input"
            )
        if any(t == "" for t in texts):
            return 400, _error("'$.input' is invalid. Please check the API reference.", "input")
        counts = [self.token_counter(t) for t in texts]
        if max(counts) > self.max_input_tokens:
            return 400, _error(
                f"This model's maximum context length is {self.max_input_tokens} tokens, however "
                f"you requested {max(counts)} tokens. Please reduce your prompt.",
                "input",
            )
        if sum(counts) > self.max_request_tokens:
            return 400, _error(
                f"Requested {sum(counts)} tokens, max {self.max_request_tokens} tokens per request",
                "input",
            )
        dimension = NATIVE.get(model) or FIXED.get(model) or 1536
        wanted = body.get("dimensions")
        if wanted is not None:
            if model not in NATIVE:
                return 400, _error(
                    "This model does not support specifying dimensions.", "dimensions"
                )
            if not isinstance(wanted, int) or not 1 <= wanted <= NATIVE[model]:
                return 400, _error(f"Invalid value for 'dimensions': {wanted!r}", "dimensions")
            dimension = wanted
        encoding = body.get("encoding_format", "float") if self.base64_answers else "float"
        if encoding not in ("float", "base64"):
            return 400, _error(f"Invalid value for 'encoding_format': {encoding!r}", "encoding")
        vectors = hash_vectors(texts, dimension)
        data = [
            {"object": "embedding", "index": i, "embedding": encode_vector(v, encoding)}
            for i, v in enumerate(vectors)
        ]
        if self.reverse_data:
            data.reverse()
        tokens = sum(counts)
        answer = {
            "object": "list",
            "data": data,
            "model": model,
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return 200, json.dumps(answer).encode()


def _error(message: str, param: str | None = None, *, code: str | None = None) -> bytes:
    return _error_json(message, "invalid_request_error", param, code)


def _error_json(message: str, kind: str, param: str | None, code: str | None) -> bytes:
    error = {"message": message, "type": kind, "param": param, "code": code}
    return json.dumps({"error": error}).encode()
