"""The one way engram sends a request to a paid API: ``Meter`` retries it (exponential backoff
with jitter, ``Retry-After`` honoured up to a cap) and records every attempt in the usage
ledger, so the ledger counts exactly the requests the server saw. Retries live here, not in the
SDKs (their own retries are switched off), so every provider shares one policy and no attempt
goes unrecorded."""

from __future__ import annotations

import contextlib
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from engram.errors import EmbedderError, EngramError
from engram.usage.ledger import UsageLedger

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a failed request is retried.

    The n-th retry (from 0) waits ``Retry-After`` when the server sent one, else a random time
    between half and all of ``min(max_delay, base_delay * 2**n)`` ("equal jitter", so clients
    that failed together do not retry together). A ``Retry-After`` longer than
    ``max_retry_after`` is not waited for: the request fails at once with that in the message.
    """

    max_retries: int = 5
    base_delay: float = 0.5
    max_delay: float = 20.0
    max_retry_after: float = 60.0

    def delay(self, retry: int, retry_after: float | None, unit: float) -> float | None:
        """Seconds to wait before retry number ``retry``; ``None`` means give up now.
        ``unit`` is a random number in [0, 1)."""
        if retry_after is not None:
            return max(0.0, retry_after) if retry_after <= self.max_retry_after else None
        cap = min(self.max_delay, self.base_delay * 2.0**retry)
        return cap / 2.0 + unit * cap / 2.0


@dataclass(frozen=True, slots=True)
class Failure:
    """What an API embedder makes of one failed attempt.

    ``label`` goes to the ledger and logs (short, built by engram, never the server's text);
    ``message`` goes into the final error and must already say how to fix it.
    """

    label: str
    message: str
    retryable: bool
    retry_after: float | None = None


class MalformedResponse(Exception):
    """The server answered 2xx with something that is not a valid embeddings response."""


T = TypeVar("T")

EMBED_RETRY_HINT = "`engram index` embeds what is missing on its next run"


@dataclass(frozen=True, slots=True)
class Tokens:
    """What one request was billed: input tokens, and output tokens for chat models."""

    input: int
    output: int = 0


@dataclass
class Meter:
    """Sends an API client's requests through one retry policy and records every attempt.

    ``classify`` turns an SDK exception into a ``Failure``; ``MalformedResponse`` raised while
    parsing an answer is handled here (retried: it is the server's fault). ``secrets`` (API keys)
    are scrubbed from every message as a last line of defence. ``sleep`` and ``random`` are
    injectable so tests can check the waits without waiting. A request that fails for good
    raises ``error`` (``EmbedderError`` for embedders) with a message that ends in
    ``retry_hint`` when the API seems down.
    """

    provider: str
    model: str
    classify: Callable[[Exception], Failure]
    ledger: UsageLedger | None = None
    price_per_million: float | None = None
    output_price_per_million: float | None = None
    policy: RetryPolicy = field(default_factory=RetryPolicy)
    secrets: Sequence[str] = ()
    sleep: Callable[[float], None] = time.sleep
    random: Callable[[], float] = random.random
    error: type[EngramError] = EmbedderError
    retry_hint: str = EMBED_RETRY_HINT

    def call(
        self,
        request: Callable[[], tuple[T, int | Tokens]],
        *,
        texts: int = 0,
        operation: str = "embed",
    ) -> T:
        """Run ``request`` (which returns its answer and the tokens billed: an int of input
        tokens, or ``Tokens``) until it succeeds, fails for good, or runs out of retries.
        Every attempt is one ledger row for ``operation``."""
        retry = 0
        while True:
            started = time.perf_counter()
            try:
                value, billed = request()
            except Exception as exc:
                failure = self._classify(exc)
                self._record(Tokens(0), started, failure.label, operation)
                wait = self._wait(failure, retry)
                if wait is None:
                    raise self.error(self._final(failure, retry + 1, texts)) from None
                log.warning(
                    "%s/%s: %s; retrying in %.2f s (retry %d of %d)",
                    self.provider,
                    self.model,
                    failure.label,
                    wait,
                    retry + 1,
                    self.policy.max_retries,
                )
                self.sleep(wait)
                retry += 1
                continue
            tokens = billed if isinstance(billed, Tokens) else Tokens(int(billed))
            self._record(tokens, started, None, operation)
            return value

    def _classify(self, exc: Exception) -> Failure:
        if isinstance(exc, MalformedResponse):
            return Failure(
                label="malformed response",
                message=f"the API answered with a malformed response ({exc})",
                retryable=True,
            )
        return self.classify(exc)

    def _wait(self, failure: Failure, retry: int) -> float | None:
        if not failure.retryable or retry >= self.policy.max_retries:
            return None
        return self.policy.delay(retry, failure.retry_after, self.random())

    def _final(self, failure: Failure, attempts: int, texts: int) -> str:
        who = f"{self.provider}/{self.model}"
        tried = f" after {attempts} attempts" if attempts > 1 else ""
        noun = "text" if texts == 1 else "texts"
        on = f" on {texts} {noun}" if texts else ""
        message = f"{who} failed{tried}{on}: {failure.message}"
        after = failure.retry_after
        if failure.retryable and after is not None and after > self.policy.max_retry_after:
            message += (
                f"; the API asked to wait {after:g} s, longer than max_retry_after "
                f"({self.policy.max_retry_after:g} s)"
            )
        if failure.retryable:
            message += f"; the API seems unavailable: try again later ({self.retry_hint})"
        return self.scrub(message)

    def scrub(self, text: str) -> str:
        """``text`` with every secret replaced by ``***``."""
        for secret in self.secrets:
            if secret:
                text = text.replace(secret, "***")
        return text

    def _record(self, tokens: Tokens, started: float, error: str | None, operation: str) -> None:
        if self.ledger is None:
            return
        latency_ms = (time.perf_counter() - started) * 1000.0
        label = self.scrub(error) if error is not None else None
        self.ledger.record(
            self.provider,
            self.model,
            tokens.input,
            1,
            self.cost(tokens),
            latency_ms,
            label,
            operation=operation,
            output_tokens=tokens.output,
        )

    def cost(self, tokens: Tokens) -> float | None:
        """Estimated USD for ``tokens``; unknown (None) when a needed price is unknown."""
        if self.price_per_million is None:
            return None
        cost = tokens.input * self.price_per_million / 1_000_000
        if tokens.output:
            if self.output_price_per_million is None:
                return None
            cost += tokens.output * self.output_price_per_million / 1_000_000
        return cost


def parse_retry_after(headers: Callable[[str], str | None]) -> float | None:
    """Seconds from ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date), or None.
    ``headers`` looks a header up case-insensitively."""
    raw_ms = headers("retry-after-ms")
    if raw_ms is not None:
        with contextlib.suppress(ValueError):
            return max(0.0, float(raw_ms) / 1000.0)
    raw = headers("retry-after")
    if raw is None:
        return None
    with contextlib.suppress(ValueError):
        return max(0.0, float(raw))
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError, IndexError):
        return None
    return max(0.0, when.timestamp() - time.time())
