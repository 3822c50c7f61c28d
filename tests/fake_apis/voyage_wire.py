"""Voyage AI's wire format: the embeddings API.

``VoyageEmbeddings`` answers ``POST /v1/embeddings`` as the real API does: the request JSON
(``input``, ``model``, ``input_type``, ``truncation``, ``output_dimension``, ``output_dtype``,
``encoding_format``; anything else is refused), answers ``{"object": "list", "data": [{"object":
"embedding", "embedding", "index"}], "model", "usage": {"total_tokens"}}`` with base64 float32
vectors when asked (the SDK's default), and errors as ``{"detail": "..."}``: 401 for a wrong key,
400 over the API's limits. A ``query`` is embedded with the prompt Voyage puts before queries, a
``document`` with the one for documents, so the two differ as they do for real.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fake_apis.embeddings import count_tokens, encode_vector, hash_vectors, input_texts
from fake_apis.server import Reply, Seen

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


class VoyageEmbeddings:
    """The Voyage AI embeddings API."""

    path = "/v1/embeddings"

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

    def auth_error(self, seen: Seen) -> bytes:
        if not seen.auth_sent:
            return _detail("No API key provided.")
        return _detail("Provided API key is invalid.")

    def error_body(self, status: int) -> bytes:
        if status == 429:
            return _detail(
                "You have not yet added your payment method in the billing page and will have "
                "reduced rate limits. Please try again later."
            )
        if status >= 500:
            return _detail("The server failed to process the request.")
        return _detail(f"HTTP {status}")

    def not_found(self, seen: Seen) -> bytes:
        return _detail("Not Found")

    def answer(self, body: Any, reply: Reply | None) -> tuple[int, bytes]:
        problem = self._bad_request(body)
        if problem is not None:
            return problem
        texts = input_texts(body) or []
        counts = [self.token_counter(t) for t in texts]
        refused = _over_limits(body["model"], counts, truncation=body.get("truncation", True))
        if refused:
            return 400, refused
        refused = _bad_output(body)
        if refused:
            return 400, refused
        dimension = body.get("output_dimension") or 1024
        prompt = PROMPTS.get(body.get("input_type") or "", "")
        data = [
            {
                "object": "embedding",
                "embedding": encode_vector(v, body.get("encoding_format")),
                "index": i,
            }
            for i, v in enumerate(hash_vectors([prompt + t for t in texts], dimension))
        ]
        usage = {"total_tokens": sum(min(c, CONTEXT) for c in counts)}
        answer = {"object": "list", "data": data, "model": body["model"], "usage": usage}
        return 200, json.dumps(answer).encode()

    def _bad_request(self, body: Any) -> tuple[int, bytes] | None:
        """The API's status and body for a request it cannot take at all, or None."""
        if not isinstance(body, dict):
            return 400, _detail("Request body is not valid JSON.")
        unknown = sorted(set(body) - _ALLOWED_FIELDS)
        if unknown:
            return 422, _detail(f"Unexpected argument: {unknown[0]}")
        model = body.get("model")
        if model not in MODELS:
            return 400, _detail(f"Model {model} is not supported. Supported: {', '.join(MODELS)}")
        texts = input_texts(body)
        if texts is None:
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
        return None


def _bad_output(body: dict[str, Any]) -> bytes | None:
    """The 400 body for an output format this server does not give, or None."""
    dimension = body.get("output_dimension") or 1024
    if dimension not in SIZES:
        return _detail(f"output_dimension must be one of {SIZES}, got {dimension}.")
    if body.get("output_dtype") not in (None, "float"):
        return _detail("this server only speaks output_dtype float.")
    encoding = body.get("encoding_format")
    if encoding not in (None, "base64"):
        return _detail(f"encoding_format must be null or base64, got {encoding}.")
    return None


def _over_limits(model: str, counts: list[int], *, truncation: bool) -> bytes | None:
    if not truncation and max(counts) > CONTEXT:
        return _detail(
            f"Input {counts.index(max(counts))} has {max(counts)} tokens, more than the "
            f"context length {CONTEXT}; enable truncation or shorten it."
        )
    total = sum(min(c, CONTEXT) for c in counts)
    if total > MODELS[model]:
        return _detail(
            f"Request to model '{model}' failed. The max allowed tokens per submitted batch "
            f"is {MODELS[model]}. Your batch has {total} tokens after truncation."
        )
    return None


def _detail(message: str) -> bytes:
    return json.dumps({"detail": message}).encode()
