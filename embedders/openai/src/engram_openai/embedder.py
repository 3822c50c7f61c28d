"""``OpenAIEmbedder``: the official ``openai`` SDK behind engram's batching, retries and ledger
(``engram.embedding.api.ApiEmbedder``). The SDK is imported when an embedder is built, not when
engram loads its plugins.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engram import (
    ApiEmbedder,
    Failure,
    InputType,
    MalformedResponse,
    parse_retry_after,
    token_bound,
)
from engram_openai.options import API_LIMITS, OpenAIOptions

if TYPE_CHECKING:
    import openai


class OpenAIEmbedder(ApiEmbedder):
    """Embeds with an OpenAI (or OpenAI-compatible) embeddings endpoint; symmetric models, so
    ``input_type`` is not sent."""

    name = "openai"
    service = "OpenAI"
    sdk = "openai"

    def __init__(
        self,
        options: OpenAIOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else OpenAIOptions()
        self._dimensions = self.options.dimensions_parameter()
        super().__init__(
            self.options,
            model=self.options.model,
            dimension=self.options.output_dimension(),
            model_limits=API_LIMITS,
            key_env=self.options.api_key_env,
            sleep=sleep,
            random=random,
        )

    def connect(self, key: str) -> openai.OpenAI:
        import openai

        return openai.OpenAI(
            api_key=key,
            base_url=self.options.base_url or None,
            timeout=self.options.timeout,
            max_retries=0,
        )

    def send(self, texts: list[str], input_type: InputType) -> tuple[list[list[float]], int]:
        extra: dict[str, Any] = {}
        if self._dimensions is not None:
            extra["dimensions"] = self._dimensions
        response = self._client.embeddings.create(input=texts, model=self.model, **extra)
        try:
            data = sorted(response.data, key=lambda item: int(item.index))
            if [int(item.index) for item in data] != list(range(len(texts))):
                raise MalformedResponse(
                    f"indexes {[item.index for item in data][:10]} do not match {len(texts)} inputs"
                )
            vectors = [[float(x) for x in item.embedding] for item in data]
            usage = getattr(response, "usage", None)
            tokens = getattr(usage, "prompt_tokens", None)
        except (AttributeError, TypeError, ValueError) as exc:
            raise MalformedResponse(f"{type(exc).__name__}: {exc}") from None
        if not isinstance(tokens, int) or tokens < 0:
            tokens = sum(token_bound(t) for t in texts)  # a server that reports no usage
        return vectors, tokens

    def classify(self, exc: Exception) -> Failure:
        """What an exception from the ``openai`` SDK means for a retry, and how to fix it."""
        import openai

        if isinstance(exc, openai.APITimeoutError):
            return self.timed_out()
        if isinstance(exc, openai.APIConnectionError):
            return self.unreachable(self.options.base_url)
        if isinstance(exc, openai.APIStatusError):
            return self._status_failure(exc)
        malformed = (
            openai.APIResponseValidationError,
            ValueError,
            TypeError,
            KeyError,
            AttributeError,
        )
        if isinstance(exc, malformed):
            return self.unreadable(exc)
        return self.unexpected(exc)

    def _status_failure(self, exc: openai.APIStatusError) -> Failure:
        status = exc.status_code
        code, message = _error_fields(exc.body)
        label = f"HTTP {status}" + (f" {code}" if code else "")
        if status == 429 and code == "insufficient_quota":
            return Failure(
                label,
                "the account's quota is used up (HTTP 429 insufficient_quota); check the plan and "
                "billing details",
                retryable=False,
            )
        wait = parse_retry_after(exc.response.headers.get)
        return self.status_failure(status, message, label=label, retry_after=wait)


def _error_fields(body: object) -> tuple[str | None, str]:
    """(code, message) of an OpenAI error body ``{"error": {"message", "type", "param", "code"}}``
    (the SDK hands over the inner object, or the raw body when it is not JSON)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, "no error details"
    code = error.get("code") or error.get("type")
    message = error.get("message")
    return (str(code) if code else None), (str(message) if message else "no error details")
