"""``ApiEmbedder``: what every embedder behind a metered HTTP API shares, so a provider plugin
only says how to build its SDK client, send one request, and read the SDK's exceptions.

The shared part: the key from the options or the environment (never logged), the request limits
(the model's, with the options' overrides), every request sent through one ``Meter`` (retries
with backoff and ``Retry-After``, one ledger row per HTTP request, keys scrubbed from messages),
texts packed into as few requests as the limits allow, and the failures every API has (timeout,
no connection, a rejected key, an answer that cannot be read) worded once.

A missing key does not stop the embedder from being built: its identity (name, model,
dimension) is known without one, so a memory opens, and each ``embed`` raises the
``MissingKeyError`` that says which variable to set. Indexing then stores keyword-only chunks
and search answers by keyword, each with that message as a warning, as for an unreachable API.
"""

from __future__ import annotations

import random as _random
import time
from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from engram.embedding.base import BaseEmbedder
from engram.errors import MissingKeyError
from engram.models import InputType
from engram.usage import (
    ApiOptions,
    Failure,
    Meter,
    RequestLimits,
    embed_in_requests,
    price_for,
    resolve_api_key,
)

RETRYABLE_STATUSES = frozenset({408, 409, 429})  # and every 5xx
STATUS_HINTS = {
    403: "check the key's access to this model",
    404: "check the model name and base_url",
}
DEFAULT_HINT = "check the model, dimension and max_input_tokens options"


class ApiEmbedder(BaseEmbedder):
    """A ``BaseEmbedder`` whose batches go to a provider's API through its official SDK.

    A subclass sets ``name`` (the provider, as in the ledger), ``service`` (its name in
    messages) and ``sdk`` (the SDK's distribution), and implements ``connect``, ``send`` and
    ``classify``. The SDK's own retries must be off: the meter retries, so that every HTTP
    request is one ledger row and every provider follows one policy.
    """

    service: ClassVar[str]
    sdk: ClassVar[str]

    def __init__(
        self,
        options: ApiOptions,
        *,
        model: str,
        dimension: int,
        model_limits: RequestLimits,
        key_env: str,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.model = model
        self.dimension = dimension
        self.limits = options.limits(model_limits)
        self.max_batch = self.limits.max_inputs
        self.key_env = key_env
        self._long_texts = options.long_texts
        self.missing_key: MissingKeyError | None = None
        try:
            key = resolve_api_key(options.api_key, key_env, self.service)
        except MissingKeyError as exc:
            key, self.missing_key = "", exc
        self._client: Any = None if self.missing_key else self.connect(key)
        self.meter = Meter(
            provider=self.name,
            model=model,
            classify=self.classify,
            ledger=options.open_ledger(),
            price_per_million=price_for(self.name, model, options.price_per_million_tokens),
            policy=options.retry_policy(),
            secrets=(key,) if key else (),
            sleep=sleep,
            random=random,
        )

    @abstractmethod
    def connect(self, key: str) -> Any:
        """The SDK client, with its retries off and the options' timeout and base URL."""

    @abstractmethod
    def send(self, texts: list[str], input_type: InputType) -> tuple[list[list[float]], int]:
        """One HTTP request: the vectors in input order and the input tokens billed. Raise
        ``MalformedResponse`` for a 2xx answer that is not a valid embeddings response."""

    @abstractmethod
    def classify(self, exc: Exception) -> Failure:
        """What an exception from the SDK means: retry or not, and how to fix it."""

    def embed_batch(self, texts: list[str], input_type: InputType) -> list[list[float]]:
        if self.missing_key is not None:
            raise self.missing_key

        def send(batch: list[str]) -> tuple[list[list[float]], int]:
            return self.send(batch, input_type)

        return embed_in_requests(
            texts,
            send,
            meter=self.meter,
            limits=self.limits,
            long_texts=self._long_texts,
            dimension=self.dimension,
        )

    def close(self) -> None:
        """Close the SDK's connections (when it keeps any) and the ledger."""
        close = getattr(self._client, "close", None)
        if callable(close):
            close()
        if self.meter.ledger is not None:
            self.meter.ledger.close()

    # -- the failures every API has, worded once ------------------------------------------------

    def timed_out(self) -> Failure:
        return Failure("timeout", "the request timed out (raise timeout?)", retryable=True)

    def unreachable(self, base_url: str | None) -> Failure:
        where = base_url or f"the {self.service} API"
        return Failure("connection error", f"cannot connect to {where}", retryable=True)

    def unreadable(self, exc: Exception) -> Failure:
        """A body the SDK could not read (bad JSON, a proxy's HTML page, vectors that are not
        numbers): the server's fault, so retried."""
        return Failure(
            "malformed response",
            f"the API's answer could not be read ({type(exc).__name__})",
            retryable=True,
        )

    def unexpected(self, exc: Exception) -> Failure:
        return Failure(
            f"error {type(exc).__name__}",
            f"unexpected {type(exc).__name__}: {exc}; report it with the engram and {self.sdk} "
            "versions",
            retryable=False,
        )

    def status_failure(
        self,
        status: int,
        detail: str,
        *,
        label: str | None = None,
        retry_after: float | None = None,
    ) -> Failure:
        """An HTTP error status: 401 names the key variable (never the server's message, which
        quotes part of the key); 408, 409, 429 and 5xx are retried; the rest say what to check."""
        label = label or f"HTTP {status}"
        if status == 401:
            return Failure(
                label,
                f"the API rejected the key (HTTP 401); check that {self.key_env} (or the api_key "
                "option) holds a valid, active key",
                retryable=False,
            )
        if status in RETRYABLE_STATUSES or status >= 500:
            return Failure(
                label, f"HTTP {status}: {detail}", retryable=True, retry_after=retry_after
            )
        hint = STATUS_HINTS.get(status, DEFAULT_HINT)
        return Failure(
            label,
            f"the API refused the request (HTTP {status}): {detail}; {hint}",
            retryable=False,
        )
