"""``VoyageEmbedder``: the official ``voyageai`` SDK behind engram's batching, retries and ledger
(``engram.embedding.api.ApiEmbedder``).

Voyage models are asymmetric: a text is embedded as a ``document`` when indexed and as a
``query`` when searched for, and the two vectors differ (the protocol's ``input_type`` is sent
as is). Over-long texts are cut by engram first and the API's own ``truncation`` stays on as a
backstop. The SDK (≈ 1 s to import) is imported when an embedder is built, not when engram loads
its plugins.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable
from typing import Any

from engram import ApiEmbedder, Failure, InputType, parse_retry_after, token_bound
from engram_voyage.options import VoyageOptions


class VoyageEmbedder(ApiEmbedder):
    """Embeds with the Voyage AI embeddings API."""

    name = "voyage"
    service = "Voyage AI"
    sdk = "voyageai"

    def __init__(
        self,
        options: VoyageOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else VoyageOptions()
        self._output_dimension = self.options.output_dimension_parameter()
        super().__init__(
            self.options,
            model=self.options.model,
            dimension=self.options.output_dimension(),
            model_limits=self.options.model_limits(),
            key_env=self.options.api_key_env,
            sleep=sleep,
            random=random,
        )

    def connect(self, key: str) -> Any:
        """The SDK's client (it keeps no connection of its own to close)."""
        from voyageai.client import Client

        return Client(
            api_key=key,
            max_retries=0,
            timeout=self.options.timeout,
            base_url=self.options.base_url or None,
        )

    def send(self, texts: list[str], input_type: InputType) -> tuple[list[list[float]], int]:
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

    def classify(self, exc: Exception) -> Failure:
        """What an exception from the ``voyageai`` SDK means for a retry, and how to fix it."""
        from voyageai import error

        if isinstance(exc, error.Timeout):
            return self.timed_out()
        if isinstance(exc, error.APIConnectionError):
            return self.unreachable(self.options.base_url)
        if isinstance(exc, error.VoyageError):
            return self._status_failure(exc)
        if isinstance(exc, ValueError | TypeError | KeyError | AttributeError):
            return self.unreadable(exc)
        return self.unexpected(exc)

    def _status_failure(self, exc: Any) -> Failure:
        status = exc.http_status if isinstance(exc.http_status, int) else None
        if status is None or 200 <= status < 300:
            return Failure(
                "malformed response",
                "the API's answer could not be read (not JSON)",
                retryable=True,
            )
        detail = str(exc.user_message or "no error details")
        wait = parse_retry_after(_header_lookup(exc.headers))
        return self.status_failure(status, detail, retry_after=wait)


def _header_lookup(headers: Any) -> Callable[[str], str | None]:
    """Case-insensitive header lookup over whatever mapping the SDK kept (requests' is one)."""
    lowered = {str(k).lower(): str(v) for k, v in dict(headers or {}).items()}
    return lambda name: lowered.get(name.lower())
