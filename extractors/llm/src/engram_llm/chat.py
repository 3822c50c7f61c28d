"""What every chat provider shares, whatever its protocol: the key, every request through
core's ``Meter`` (retries with backoff and ``Retry-After``, one usage-ledger row per HTTP attempt,
keys scrubbed from messages), the meaning of an HTTP status, and answers parsed as JSON.

A protocol (``openai_chat``, ``anthropic_chat``, ``google_chat``) adds its SDK's client, one
request and the reading of its SDK's exceptions; ``make_provider`` picks it by the ``provider``
option and imports only that one, so an unused SDK costs nothing. Each SDK's own retries are off,
so the ledger counts exactly the requests the server saw. A provider whose key is missing is
built anyway and fails each call with the variable to set: the next provider is tried, and an
agent's session never breaks for want of a key.
"""

from __future__ import annotations

import contextlib
import json
import random as _random
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any

from engram import (
    ExtractorError,
    Failure,
    Meter,
    MissingKeyError,
    RetryPolicy,
    Tokens,
    UsageLedger,
    parse_retry_after,
    resolve_api_key,
)
from engram_llm.options import LLMOptions, ProviderOptions

NO_KEY = "not-needed"  # what the SDK sends to a server that needs no key
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
RETRYABLE = frozenset({408, 409, 429})


class NotJson(Exception):
    """The model answered, but not with JSON: asking the same model again at temperature 0
    gives the same answer, so the next provider is tried at once."""


class ChatProvider(ABC):
    """An endpoint and model; ``ask`` returns the parsed JSON answer or raises
    ``ExtractorError`` saying what went wrong (after the retries)."""

    def __init__(
        self,
        options: ProviderOptions,
        shared: LLMOptions,
        *,
        ledger: UsageLedger | None,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options
        self.shared = shared
        self.label = options.label()
        self.missing_key: str | None = None
        self.key_env = options.key_env()
        key = NO_KEY
        if options.api_key is not None or self.key_env:
            try:
                key = resolve_api_key(options.api_key, self.key_env, self.label)
            except MissingKeyError as exc:
                self.missing_key = str(exc)
        self._key = key
        price_in, price_out = options.prices()
        self.meter = Meter(
            provider=self.label,
            model=options.model,
            classify=self.classify,
            ledger=ledger,
            price_per_million=price_in,
            output_price_per_million=price_out,
            policy=RetryPolicy(
                max_retries=shared.max_retries,
                base_delay=shared.retry_base_delay,
                max_delay=shared.retry_max_delay,
            ),
            secrets=(key,) if key != NO_KEY else (),
            sleep=sleep,
            random=random,
            error=ExtractorError,
            retry_hint="the next capture tries again",
        )

    def ask(self, system: str, user: str, operation: str) -> Any:
        """The model's JSON answer to one (system, user) prompt."""
        if self.missing_key is not None:
            raise ExtractorError(self.missing_key)
        return self.meter.call(lambda: self.request(system, user, operation), operation=operation)

    @abstractmethod
    def request(self, system: str, user: str, operation: str) -> tuple[Any, Tokens]:
        """One HTTP request: the parsed answer and the tokens billed. Raises the SDK's
        exceptions, ``MalformedResponse`` or ``NotJson``."""

    @abstractmethod
    def classify_sdk(self, exc: Exception) -> Failure | None:
        """What an exception of this provider's SDK means; None when it is not the SDK's."""

    def classify(self, exc: Exception) -> Failure:
        """What an exception means for a retry, and how to fix it."""
        if isinstance(exc, NotJson):
            return Failure("not JSON", f"the model's answer was not JSON ({exc})", False)
        failure = self.classify_sdk(exc)
        if failure is not None:
            return failure
        if isinstance(exc, ValueError | TypeError):
            return Failure("malformed response", f"unreadable answer ({type(exc).__name__})", True)
        return Failure(f"error {type(exc).__name__}", f"unexpected {type(exc).__name__}", False)

    def timeout_failure(self) -> Failure:
        return Failure("timeout", f"no answer within {self.shared.timeout:g} s", True)

    def connection_failure(self, default_where: str) -> Failure:
        where = self.options.base_url or default_where
        return Failure("connection error", f"cannot connect to {where}", True)

    def status_failure(self, status: int, headers: Mapping[str, str]) -> Failure:
        """An HTTP error status: 401 names the key variable; 408, 409, 429 and 5xx are retried
        (after ``Retry-After`` when sent); anything else is a refusal not worth repeating."""
        label = f"HTTP {status}"
        if status == 401:
            variable = self.key_env or "the api_key option"
            return Failure(label, f"the key was rejected (HTTP 401); check {variable}", False)
        if status in RETRYABLE or status >= 500:
            wait = parse_retry_after(headers.get)
            return Failure(label, f"HTTP {status}", True, retry_after=wait)
        return Failure(
            label, f"the request was refused (HTTP {status}); check the model name", False
        )

    @abstractmethod
    def close(self) -> None:
        """Release the SDK's HTTP connections."""


def parse_json(content: str) -> Any:
    """The JSON in a model's answer: a bare object or list, or one inside a ``` fence;
    ``NotJson`` when there is none."""
    text = content.strip()
    fenced = _FENCE.match(text)
    if fenced:
        text = fenced.group(1)
    with contextlib.suppress(ValueError):
        return json.loads(text)
    start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
    if start >= 0:
        with contextlib.suppress(ValueError):
            return json.JSONDecoder().raw_decode(text[start:])[0]
    preview = " ".join(content.split())[:60]
    raise NotJson(f"{len(content)} characters: {preview!r}")
