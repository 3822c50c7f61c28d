"""One chat provider: the official ``openai`` SDK against an OpenAI-compatible endpoint, every
request through core's ``Meter`` (retries with backoff and ``Retry-After``, one usage-ledger row
per HTTP attempt, keys scrubbed from messages), answers parsed as JSON.

The SDK's own retries are off, so the ledger counts exactly the requests the server saw. A
provider whose key is missing is built anyway and fails each call with the variable to set: the
next provider is tried, and an agent's session never breaks for want of a key.
"""

from __future__ import annotations

import contextlib
import json
import random as _random
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from engram import (
    ExtractorError,
    Failure,
    MalformedResponse,
    Meter,
    MissingKeyError,
    RetryPolicy,
    Tokens,
    UsageLedger,
    parse_retry_after,
    resolve_api_key,
    token_bound,
)
from engram_llm.options import LLMOptions, ProviderOptions

if TYPE_CHECKING:
    import openai

NO_KEY = "not-needed"  # what the SDK sends to a server that needs no key
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
RETRYABLE = frozenset({408, 409, 429})


class NotJson(Exception):
    """The model answered, but not with JSON: asking the same model again at temperature 0
    gives the same answer, so the next provider is tried at once."""


class ChatProvider:
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
        key = NO_KEY
        if options.api_key is not None or options.api_key_env:
            try:
                key = resolve_api_key(options.api_key, options.api_key_env, self.label)
            except MissingKeyError as exc:
                self.missing_key = str(exc)
        self._key = key
        self._client: openai.OpenAI | None = None
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

    def client(self) -> openai.OpenAI:
        if self._client is None:
            import openai

            self._client = openai.OpenAI(
                api_key=self._key,
                base_url=self.options.base_url or None,
                timeout=self.shared.timeout,
                max_retries=0,
            )
        return self._client

    def ask(self, system: str, user: str, operation: str) -> Any:
        """The model's JSON answer to one (system, user) prompt."""
        if self.missing_key is not None:
            raise ExtractorError(self.missing_key)
        extra: dict[str, Any] = {}
        if self.options.json_mode:
            extra["response_format"] = {"type": "json_object"}

        def request() -> tuple[Any, Tokens]:
            response = self.client().chat.completions.create(
                model=self.options.model,
                messages=[
                    {"role": "system", "content": system},
                    {"role": "user", "content": user},
                ],
                temperature=self.shared.temperature,
                max_tokens=self.shared.max_output_tokens,
                **extra,
            )
            try:
                content = response.choices[0].message.content or ""
            except (AttributeError, IndexError, TypeError) as exc:
                raise MalformedResponse(
                    f"no message in the answer ({type(exc).__name__})"
                ) from None
            usage = getattr(response, "usage", None)
            tokens_in = getattr(usage, "prompt_tokens", None)
            tokens_out = getattr(usage, "completion_tokens", None)
            tokens = Tokens(
                tokens_in if isinstance(tokens_in, int) else token_bound(system + user),
                tokens_out if isinstance(tokens_out, int) else token_bound(content),
            )
            return parse_json(content), tokens

        return self.meter.call(request, operation=operation)

    def classify(self, exc: Exception) -> Failure:
        """What an exception from the ``openai`` SDK means for a retry, and how to fix it."""
        import openai

        if isinstance(exc, NotJson):
            return Failure("not JSON", f"the model's answer was not JSON ({exc})", False)
        if isinstance(exc, openai.APITimeoutError):
            return Failure("timeout", f"no answer within {self.shared.timeout:g} s", True)
        if isinstance(exc, openai.APIConnectionError):
            where = self.options.base_url or "the OpenAI API"
            return Failure("connection error", f"cannot connect to {where}", True)
        if isinstance(exc, openai.APIStatusError):
            return self._status(exc)
        if isinstance(exc, openai.APIResponseValidationError | ValueError | TypeError):
            return Failure("malformed response", f"unreadable answer ({type(exc).__name__})", True)
        return Failure(f"error {type(exc).__name__}", f"unexpected {type(exc).__name__}", False)

    def _status(self, exc: openai.APIStatusError) -> Failure:
        status = exc.status_code
        label = f"HTTP {status}"
        if status == 401:
            variable = self.options.api_key_env or "the api_key option"
            return Failure(label, f"the key was rejected (HTTP 401); check {variable}", False)
        if status in RETRYABLE or status >= 500:
            wait = parse_retry_after(exc.response.headers.get)
            return Failure(label, f"HTTP {status}", True, retry_after=wait)
        return Failure(
            label, f"the request was refused (HTTP {status}); check the model name", False
        )

    def close(self) -> None:
        if self._client is not None:
            self._client.close()


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
