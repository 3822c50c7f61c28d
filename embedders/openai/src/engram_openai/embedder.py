"""``OpenAIEmbedder``: the official ``openai`` SDK behind engram's batching, retries and ledger.

The SDK's own retries are off (``max_retries=0``): ``engram.usage.Meter`` retries instead, so
every HTTP request is one ledger row and both API embedders follow one policy. The SDK is
imported when an embedder is built, not when engram loads its plugins.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engram.embedders import BaseEmbedder
from engram.models import InputType
from engram.usage import (
    Failure,
    MalformedResponse,
    Meter,
    embed_in_requests,
    parse_retry_after,
    price_for,
    resolve_api_key,
    token_bound,
)
from engram_openai.options import API_LIMITS, OpenAIOptions

if TYPE_CHECKING:
    import openai

PROVIDER = "openai"


class OpenAIEmbedder(BaseEmbedder):
    """Embeds with an OpenAI (or OpenAI-compatible) embeddings endpoint; symmetric models, so
    ``input_type`` is not sent."""

    name = PROVIDER

    def __init__(
        self,
        options: OpenAIOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else OpenAIOptions()
        self.model = self.options.model
        self.dimension = self.options.output_dimension()
        self.limits = self.options.limits(API_LIMITS)
        self.max_batch = self.limits.max_inputs
        key = resolve_api_key(self.options.api_key, self.options.api_key_env, "OpenAI")
        import openai

        self._client = openai.OpenAI(
            api_key=key,
            base_url=self.options.base_url or None,
            timeout=self.options.timeout,
            max_retries=0,
        )
        self._dimensions = self.options.dimensions_parameter()
        self.meter = Meter(
            provider=PROVIDER,
            model=self.model,
            classify=self._classify,
            ledger=self.options.open_ledger(),
            price_per_million=price_for(
                PROVIDER, self.model, self.options.price_per_million_tokens
            ),
            policy=self.options.retry_policy(),
            secrets=(key,),
            sleep=sleep,
            random=random,
        )

    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        return embed_in_requests(
            texts,
            self._send,
            meter=self.meter,
            limits=self.limits,
            long_texts=self.options.long_texts,
            dimension=self.dimension,
        )

    def close(self) -> None:
        """Close the HTTP connections and the ledger."""
        self._client.close()
        if self.meter.ledger is not None:
            self.meter.ledger.close()

    def _send(self, texts: list[str]) -> tuple[list[list[float]], int]:
        """One HTTP request; returns the vectors in input order and the tokens billed."""
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

    def _classify(self, exc: Exception) -> Failure:
        return classify(exc, self.options.api_key_env, self.options.base_url)


def classify(exc: Exception, key_env: str, base_url: str | None) -> Failure:
    """What an exception from the ``openai`` SDK means for a retry, and how to fix it."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return Failure("timeout", "the request timed out (raise timeout?)", retryable=True)
    if isinstance(exc, openai.APIConnectionError):
        where = base_url or "the OpenAI API"
        return Failure("connection error", f"cannot connect to {where}", retryable=True)
    if isinstance(exc, openai.APIStatusError):
        return _status_failure(exc, key_env)
    malformed = (openai.APIResponseValidationError, ValueError, TypeError, KeyError, AttributeError)
    if isinstance(exc, malformed):
        # Bodies the SDK could not read (bad JSON, a non-JSON page from a proxy).
        return Failure(
            "malformed response",
            f"the API's answer could not be read ({type(exc).__name__})",
            retryable=True,
        )
    return Failure(
        f"error {type(exc).__name__}",
        f"unexpected {type(exc).__name__}: {exc}; report it with the engram and openai versions",
        retryable=False,
    )


def _status_failure(exc: openai.APIStatusError, key_env: str) -> Failure:
    status = exc.status_code
    code, message = _error_fields(exc.body)
    label = f"HTTP {status}" + (f" {code}" if code else "")
    if status == 401:
        # The server's message quotes part of the key: it is left out on purpose.
        return Failure(
            label,
            f"the API rejected the key (HTTP 401); check that {key_env} (or the api_key option) "
            "holds a valid, active key",
            retryable=False,
        )
    if status == 403:
        return Failure(
            label,
            f"access denied (HTTP 403): {message}; check the key's project and model access",
            retryable=False,
        )
    if status == 404:
        return Failure(
            label,
            f"not found (HTTP 404): {message}; check the model name and base_url",
            retryable=False,
        )
    if status == 429 and code == "insufficient_quota":
        return Failure(
            label,
            "the account's quota is used up (HTTP 429 insufficient_quota); check the plan and "
            "billing details",
            retryable=False,
        )
    if status in (408, 409, 429) or status >= 500:
        wait = parse_retry_after(exc.response.headers.get)
        return Failure(label, f"HTTP {status}: {message}", retryable=True, retry_after=wait)
    return Failure(
        label,
        f"the API refused the request (HTTP {status}): {message}; check the model, dimension "
        "and max_input_tokens options",
        retryable=False,
    )


def _error_fields(body: object) -> tuple[str | None, str]:
    """(code, message) of an OpenAI error body ``{"error": {"message", "type", "param", "code"}}``
    (the SDK hands over the inner object, or the raw body when it is not JSON)."""
    error = body.get("error", body) if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return None, "no error details"
    code = error.get("code") or error.get("type")
    message = error.get("message")
    return (str(code) if code else None), (str(message) if message else "no error details")
