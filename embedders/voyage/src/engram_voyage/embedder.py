"""``VoyageEmbedder``: the official ``voyageai`` SDK behind engram's batching, retries and ledger.

Voyage models are asymmetric: a text is embedded as a ``document`` when indexed and as a
``query`` when searched for, and the two vectors differ (the protocol's ``input_type`` is sent
as is). The SDK's retries are off (``max_retries=0``); ``engram.usage.Meter`` retries instead,
so every HTTP request is one ledger row. Over-long texts are cut by engram first and the API's
own ``truncation`` stays on as a backstop. The SDK (≈ 1 s to import) is imported when an
embedder is built, not when engram loads its plugins.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from typing import Any

from engram.embedders import BaseEmbedder
from engram.models import InputType
from engram.usage import (
    Failure,
    Meter,
    embed_in_requests,
    parse_retry_after,
    price_for,
    resolve_api_key,
    token_bound,
)
from engram_voyage.options import VoyageOptions

PROVIDER = "voyage"


class VoyageEmbedder(BaseEmbedder):
    """Embeds with the Voyage AI embeddings API."""

    name = PROVIDER

    def __init__(
        self,
        options: VoyageOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else VoyageOptions()
        self.model = self.options.model
        self.dimension = self.options.output_dimension()
        self.limits = self.options.limits(self.options.model_limits())
        self.max_batch = self.limits.max_inputs
        key = resolve_api_key(self.options.api_key, self.options.api_key_env, "Voyage AI")
        from voyageai.client import Client

        self._client = Client(
            api_key=key,
            max_retries=0,
            timeout=self.options.timeout,
            base_url=self.options.base_url or None,
        )
        self._output_dimension = self.options.output_dimension_parameter()
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
        def send(batch: list[str]) -> tuple[list[list[float]], int]:
            return self._send(batch, input_type)

        return embed_in_requests(
            texts,
            send,
            meter=self.meter,
            limits=self.limits,
            long_texts=self.options.long_texts,
            dimension=self.dimension,
        )

    def close(self) -> None:
        """Close the ledger (the SDK keeps no connection of its own to close)."""
        if self.meter.ledger is not None:
            self.meter.ledger.close()

    def _send(self, texts: list[str], input_type: InputType) -> tuple[list[list[float]], int]:
        """One HTTP request; returns the vectors in input order and the tokens billed."""
        result = self._client.embed(
            texts,
            model=self.model,
            input_type=input_type,
            truncation=True,
            output_dimension=self._output_dimension,
        )
        vectors = [[float(x) for x in vector] for vector in result.embeddings]
        tokens = result.total_tokens
        if not isinstance(tokens, int) or tokens < 0:
            tokens = sum(token_bound(t) for t in texts)
        return vectors, tokens

    def _classify(self, exc: Exception) -> Failure:
        return classify(exc, self.options.api_key_env, self.options.base_url)


def classify(exc: Exception, key_env: str, base_url: str | None) -> Failure:
    """What an exception from the ``voyageai`` SDK means for a retry, and how to fix it."""
    from voyageai import error

    if isinstance(exc, error.Timeout):
        return Failure("timeout", "the request timed out (raise timeout?)", retryable=True)
    if isinstance(exc, error.APIConnectionError):
        where = base_url or "the Voyage AI API"
        return Failure("connection error", f"cannot connect to {where}", retryable=True)
    if isinstance(exc, error.VoyageError):
        return _status_failure(exc, key_env)
    if isinstance(exc, ValueError | TypeError | KeyError | AttributeError):
        # Answers the SDK could not read (a body without data, vectors that are not numbers).
        return Failure(
            "malformed response",
            f"the API's answer could not be read ({type(exc).__name__})",
            retryable=True,
        )
    return Failure(
        f"error {type(exc).__name__}",
        f"unexpected {type(exc).__name__}: {exc}; report it with the engram and voyageai versions",
        retryable=False,
    )


def _status_failure(exc: Any, key_env: str) -> Failure:
    status = exc.http_status if isinstance(exc.http_status, int) else None
    detail = str(exc.user_message or "no error details")
    if status is None or 200 <= status < 300:
        return Failure(
            "malformed response", "the API's answer could not be read (not JSON)", retryable=True
        )
    label = f"HTTP {status}"
    if status == 401:
        return Failure(
            label,
            f"the API rejected the key (HTTP 401); check that {key_env} (or the api_key option) "
            "holds a valid, active key",
            retryable=False,
        )
    if status in (408, 409, 429) or status >= 500:
        wait = parse_retry_after(_header_lookup(exc.headers))
        return Failure(label, f"HTTP {status}: {detail}", retryable=True, retry_after=wait)
    if status == 403:
        hint = "check the key's access to this model"
    elif status == 404:
        hint = "check the model name and base_url"
    else:
        hint = "check the model, dimension and max_input_tokens options"
    return Failure(
        label, f"the API refused the request (HTTP {status}): {detail}; {hint}", retryable=False
    )


def _header_lookup(headers: Any) -> Callable[[str], str | None]:
    """Case-insensitive header lookup over whatever mapping the SDK kept (requests' is one)."""
    lowered = {str(k).lower(): str(v) for k, v in dict(headers or {}).items()}
    return lambda name: lowered.get(name.lower())
