"""What paid embedding APIs use and cost, and the one way engram makes a request to them.

- ``UsageLedger``: a local SQLite file (default ``.engram/usage.sqlite``) with one row per HTTP
  request an API embedder sent, failed ones and retries included: provider, model, input tokens,
  estimated cost, latency and a short error label. ``engram usage`` summarises it. API keys are
  never written to it: rows hold only labels built by engram, never a server's message.
- ``PRICES``: list prices in USD per million input tokens, keyed ``provider/model``; an embedder's
  ``price_per_million_tokens`` option overrides it (an unknown model costs "unknown", not 0).
- ``Meter``: runs one API request with retries (exponential backoff with jitter, ``Retry-After``
  honoured up to a cap) and records every attempt, so the ledger counts exactly the requests
  the server saw. Retries live here, not in the SDKs (their own retries are switched off), so
  both providers share one policy and no attempt goes unrecorded.
- Token budgets: a text's tokens are bounded by its UTF-8 length in bytes (a byte-level BPE
  token, as in OpenAI's tokenizers, covers at least one byte), which needs no tokenizer download
  (tiktoken fetches its tables at run time) and never underestimates. ``split_text`` cuts a text
  into pieces within a budget; ``plan_requests`` groups texts into requests within an API's
  input and token limits; ``embed_in_requests`` does both for an embedder.
- ``ApiOptions``: the options every metered API embedder shares (key, timeouts, retries, limits,
  long texts, ledger, price); ``resolve_api_key`` finds the key or names the variable to set.

The ledger reaches an embedder through its options (``ledger_path``, a ``Path`` that config
resolves against the project root like any plugin path), so an embedder built from config
records where ``engram usage`` reads, with no global state.
"""

from __future__ import annotations

import contextlib
import logging
import os
import random
import re
import sqlite3
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar, get_args

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, SecretStr

from engram.errors import ConfigError, EmbedderError, EngramError, MissingKeyError, StoreError
from engram.sqlite_file import SqliteFile, SqliteHandle

log = logging.getLogger(__name__)

DEFAULT_LEDGER_PATH = Path(".engram/usage.sqlite")
_BUSY_TIMEOUT_S = 30.0

# USD per 1M input tokens, list prices (check the provider's pricing page; override with the
# embedder's price_per_million_tokens option). Models not listed are recorded with no cost.
PRICES: dict[str, float] = {
    "openai/text-embedding-3-small": 0.02,
    "openai/text-embedding-3-large": 0.13,
    "openai/text-embedding-ada-002": 0.10,
    "voyage/voyage-3.5": 0.06,
    "voyage/voyage-3.5-lite": 0.02,
    "voyage/voyage-3-large": 0.18,
    "voyage/voyage-code-3": 0.18,
}

GroupBy = Literal["day", "provider", "model", "operation"]
GROUPS: tuple[GroupBy, ...] = get_args(GroupBy)
# Fixed SQL for each grouping key: user input only ever selects among these, never adds to them.
_GROUP_SQL: dict[str, str] = {
    "day": "strftime('%Y-%m-%d', at, 'unixepoch')",
    "provider": "provider",
    "model": "model",
    "operation": "operation",
}

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS requests (
    id           INTEGER PRIMARY KEY,
    at           REAL    NOT NULL,
    provider     TEXT    NOT NULL,
    model        TEXT    NOT NULL,
    input_tokens INTEGER NOT NULL,
    requests     INTEGER NOT NULL,
    cost_usd     REAL,
    latency_ms   REAL    NOT NULL,
    error        TEXT
);
CREATE INDEX IF NOT EXISTS requests_at ON requests (at);
"""
# Version 2: chat models (extraction) bill output tokens too, and a row says what it was for.
_SCHEMA_V2 = """
ALTER TABLE requests ADD COLUMN operation TEXT NOT NULL DEFAULT 'embed';
ALTER TABLE requests ADD COLUMN output_tokens INTEGER NOT NULL DEFAULT 0;
"""


LEDGER_FILE = SqliteFile(
    what="the usage ledger",
    steps=(_SCHEMA_V1, _SCHEMA_V2),
    fix_unwritable="check the folder is writable, or set the ledger_path option to another file",
    fix_newer="upgrade engram, or move the file away to start a new ledger",
    fix_broken="move it away and a new one is started",
)


def price_for(provider: str, model: str, override: float | None = None) -> float | None:
    """USD per 1M input tokens: the override when given, else ``PRICES``, else unknown."""
    if override is not None:
        return override
    return PRICES.get(f"{provider}/{model}")


class UsageRow(BaseModel):
    """One line of ``engram usage``: totals for a day / provider / model (``None`` = all)."""

    day: str | None = None
    provider: str | None = None
    model: str | None = None
    operation: str | None = None
    requests: int = 0
    errors: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    unpriced_requests: int = 0
    avg_latency_ms: float | None = None


class UsageLedger(SqliteHandle):
    """One SQLite file of API requests, created on first write.

    Safe for several threads (one connection behind a lock) and several processes (WAL mode,
    busy timeout, one short transaction per row). A ledger that cannot be written never stops
    embedding: the failure is logged once and the request goes on unrecorded.
    """

    file = LEDGER_FILE

    def __init__(self, path: Path | str) -> None:
        super().__init__(path, timeout=_BUSY_TIMEOUT_S)
        self.write_errors = 0

    def record(
        self,
        provider: str,
        model: str,
        input_tokens: int,
        requests: int = 1,
        cost_usd: float | None = None,
        latency_ms: float = 0.0,
        error: str | None = None,
        *,
        at: float | None = None,
        operation: str = "embed",
        output_tokens: int = 0,
    ) -> None:
        """Append one row; ``error`` is a short label (``HTTP 429``), never a server message.
        ``operation`` says what the request was for: embed, extract, contradict, condense."""
        row = (
            time.time() if at is None else at,
            provider,
            model,
            int(input_tokens),
            int(requests),
            cost_usd,
            float(latency_ms),
            error,
            operation,
            int(output_tokens),
        )
        with self._lock:
            try:
                db = self._connect()
                db.execute(
                    "INSERT INTO requests (at, provider, model, input_tokens, requests, cost_usd, "
                    "latency_ms, error, operation, output_tokens) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
            except (StoreError, sqlite3.Error) as exc:
                self.write_errors += 1
                if self.write_errors == 1:
                    log.warning("usage ledger %s not written (requests go on): %s", self.path, exc)

    def summary(
        self, group_by: Sequence[GroupBy] = GROUPS, since: float | None = None
    ) -> list[UsageRow]:
        """Totals per group (``day`` is the UTC date), oldest day first; ``since`` is a Unix
        time. No groups gives one row of totals. A ledger file that does not exist is empty."""
        for key in group_by:
            if key not in _GROUP_SQL:
                raise ConfigError(f"cannot group usage by {key!r}; use any of {', '.join(GROUPS)}")
        keys = list(dict.fromkeys(group_by))
        if not self.path.exists():
            return [UsageRow()] if not keys else []
        columns = [f"{_GROUP_SQL[k]} AS {k}" for k in keys]
        sql = (
            "SELECT "
            + ", ".join(
                [
                    *columns,
                    "COALESCE(SUM(requests), 0)",
                    "COALESCE(SUM(CASE WHEN error IS NULL THEN 0 ELSE requests END), 0)",
                    "COALESCE(SUM(input_tokens), 0)",
                    "COALESCE(SUM(output_tokens), 0)",
                    "SUM(cost_usd)",
                    "COALESCE(SUM(CASE WHEN cost_usd IS NULL THEN requests ELSE 0 END), 0)",
                    "AVG(latency_ms)",
                ]
            )
            + " FROM requests WHERE at >= ?"
        )
        if keys:
            order = ", ".join(keys)
            sql += f" GROUP BY {order} ORDER BY {order}"
        with self._lock:
            try:
                rows = self._connect().execute(sql, (since or 0.0,)).fetchall()
            except sqlite3.Error as exc:
                raise StoreError(
                    f"cannot read the usage ledger {self.path}: {exc}; if it is damaged, move it "
                    "away (a new one is started)"
                ) from None
        out = []
        for row in rows:
            named = dict(zip(keys, row[: len(keys)], strict=True))
            requests, errors, tokens, out_tokens, cost, unpriced, latency = row[len(keys) :]
            out.append(
                UsageRow(
                    **named,
                    requests=requests,
                    errors=errors,
                    input_tokens=tokens,
                    output_tokens=out_tokens,
                    cost_usd=cost,
                    unpriced_requests=unpriced,
                    avg_latency_ms=latency,
                )
            )
        return out


# -- retries and metering ----------------------------------------------------------------------


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


# -- token budgets -----------------------------------------------------------------------------

_SURROGATE = re.compile("[\ud800-\udfff]")
_MIN_BUDGET = 16  # bytes: room for any UTF-8 character plus some text


def clean_text(text: str) -> str:
    """``text`` as an API can take it: lone surrogates (from odd files) become U+FFFD, and an
    empty text becomes one space (the APIs reject empty strings)."""
    return _SURROGATE.sub("\ufffd", text) or " "


def token_bound(text: str) -> int:
    """An upper bound of the tokens any byte-level tokenizer makes of ``text``: its UTF-8 size."""
    return len(text.encode("utf-8", "surrogatepass"))


def split_text(text: str, max_tokens: int, max_pieces: int | None = None) -> list[str]:
    """``text`` cut into pieces of at most ``max_tokens`` (by ``token_bound``), at whitespace
    where there is some in the second half of a piece, never inside a character; only the first
    ``max_pieces`` pieces when given (``1`` truncates)."""
    if max_tokens < _MIN_BUDGET:
        raise ConfigError(f"a token budget of {max_tokens} is too small; use {_MIN_BUDGET} or more")
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= max_tokens:
        return [text]
    pieces: list[str] = []
    start = 0
    while start < len(data) and (max_pieces is None or len(pieces) < max_pieces):
        end = min(start + max_tokens, len(data))
        if end < len(data):
            while (data[end] & 0xC0) == 0x80:  # a continuation byte: back up to the char start
                end -= 1
            floor = start + max_tokens // 2
            space = max(data.rfind(b" ", floor, end), data.rfind(b"\n", floor, end))
            if space > start:
                end = space + 1
        pieces.append(data[start:end].decode("utf-8", "surrogatepass"))
        start = end
    return pieces


def plan_requests(sizes: Sequence[int], max_inputs: int, max_tokens: int) -> list[range]:
    """Consecutive groups of texts (as index ranges) with at most ``max_inputs`` texts and
    ``max_tokens`` tokens each. Every size must already be within ``max_tokens``."""
    groups: list[range] = []
    start, total = 0, 0
    for i, size in enumerate(sizes):
        if size > max_tokens:
            raise ConfigError(
                f"text {i} has {size} tokens, more than the {max_tokens} a request may hold; "
                "lower max_input_tokens below max_request_tokens"
            )
        if i > start and (i - start >= max_inputs or total + size > max_tokens):
            groups.append(range(start, i))
            start, total = i, 0
        total += size
    if start < len(sizes):
        groups.append(range(start, len(sizes)))
    return groups


@dataclass(frozen=True, slots=True)
class RequestLimits:
    """What one request to an API may hold, in texts and in tokens (by ``token_bound``)."""

    max_inputs: int
    max_request_tokens: int
    max_input_tokens: int


def embed_in_requests(
    texts: Sequence[str],
    send: Callable[[list[str]], tuple[list[list[float]], int]],
    *,
    meter: Meter,
    limits: RequestLimits,
    long_texts: LongTexts,
    dimension: int,
) -> list[list[float]]:
    """Embed ``texts`` in as few requests as the limits allow; one vector per text, in order.

    ``send`` makes one HTTP request for a list of texts and returns (vectors, billed tokens).
    A text over ``max_input_tokens`` is truncated to its first piece, or with
    ``long_texts="split"`` embedded piece by piece and averaged (weighted by piece size, then
    scaled to length 1).
    """
    keep = 1 if long_texts == "truncate" else None
    pieces = [split_text(clean_text(t), limits.max_input_tokens, keep) for t in texts]
    flat = [p for parts in pieces for p in parts]
    sizes = [token_bound(p) for p in flat]
    vectors: list[list[float]] = []
    for group in plan_requests(sizes, limits.max_inputs, limits.max_request_tokens):
        batch = flat[group.start : group.stop]
        vectors.extend(meter.call(_checked(send, batch), texts=len(batch)))
    for vector in vectors:
        if len(vector) != dimension:
            raise EmbedderError(
                f"{meter.provider}/{meter.model} returned vectors of {len(vector)} dims, "
                f"expected {dimension}; set the embedder's dimension option to what the model "
                "returns"
            )
    out: list[list[float]] = []
    at = 0
    for parts in pieces:
        n = len(parts)
        out.append(vectors[at] if n == 1 else _mean(vectors[at : at + n], sizes[at : at + n]))
        at += n
    return out


def _checked(
    send: Callable[[list[str]], tuple[list[list[float]], int]], batch: list[str]
) -> Callable[[], tuple[list[list[float]], int]]:
    def request() -> tuple[list[list[float]], int]:
        vectors, tokens = send(batch)
        if len(vectors) != len(batch):
            raise MalformedResponse(f"{len(vectors)} vectors for {len(batch)} inputs")
        return vectors, tokens

    return request


def _mean(vectors: list[list[float]], weights: list[int]) -> list[float]:
    """Weighted mean of piece vectors, scaled to length 1 (cosine is all that is compared)."""
    matrix = np.asarray(vectors, dtype=np.float64)
    mean = np.average(matrix, axis=0, weights=np.asarray(weights, dtype=np.float64))
    norm = float(np.linalg.norm(mean))
    result: list[float] = (mean / norm if norm > 0 else mean).tolist()
    return result


# -- options every API embedder shares ---------------------------------------------------------

LongTexts = Literal["truncate", "split"]


class ApiOptions(BaseModel):
    """Options every metered API embedder takes; each provider's model adds ``model``,
    ``dimension``, ``base_url`` and ``api_key_env``. Limits left unset are the model's own."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    api_key: SecretStr | None = Field(
        default=None,
        description=(
            "The API key. Better left to the environment variable: a key written in engram.toml "
            "ends up in version control."
        ),
    )
    timeout: float = Field(default=60.0, gt=0, description="Seconds to wait for one request.")
    max_retries: int = Field(
        default=5, ge=0, le=20, description="Retries after a 429, 5xx, timeout or bad answer."
    )
    retry_base_delay: float = Field(
        default=0.5, ge=0, description="First backoff in seconds; doubles on each retry."
    )
    retry_max_delay: float = Field(default=20.0, ge=0, description="Longest backoff in seconds.")
    max_retry_after: float = Field(
        default=60.0,
        ge=0,
        description="A Retry-After longer than this (seconds) fails at once instead of waiting.",
    )
    long_texts: LongTexts = Field(
        default="truncate",
        description=(
            "Texts over max_input_tokens: 'truncate' keeps the start; 'split' embeds every piece "
            "and averages them."
        ),
    )
    max_input_tokens: int | None = Field(
        default=None, ge=16, description="Tokens per text (default: the model's limit)."
    )
    max_request_tokens: int | None = Field(
        default=None, ge=16, description="Tokens per request (default: the API's limit)."
    )
    max_inputs_per_request: int | None = Field(
        default=None, ge=1, description="Texts per request (default: the API's limit)."
    )
    record_usage: bool = Field(
        default=True, description="Record every request in the usage ledger (engram usage)."
    )
    ledger_path: Path = Field(
        default=DEFAULT_LEDGER_PATH,
        description="The usage ledger file; relative paths are relative to the project root.",
    )
    price_per_million_tokens: float | None = Field(
        default=None,
        ge=0,
        description="USD per 1M input tokens for cost estimates (default: engram's price table).",
    )

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            max_retries=self.max_retries,
            base_delay=self.retry_base_delay,
            max_delay=self.retry_max_delay,
            max_retry_after=self.max_retry_after,
        )

    def open_ledger(self) -> UsageLedger | None:
        return UsageLedger(self.ledger_path) if self.record_usage else None

    def limits(self, model_limits: RequestLimits) -> RequestLimits:
        """The model's limits with this section's overrides; a text must fit in a request."""
        limits = RequestLimits(
            max_inputs=self.max_inputs_per_request or model_limits.max_inputs,
            max_request_tokens=self.max_request_tokens or model_limits.max_request_tokens,
            max_input_tokens=self.max_input_tokens or model_limits.max_input_tokens,
        )
        if limits.max_input_tokens > limits.max_request_tokens:
            raise ConfigError(
                f"embedder.max_input_tokens ({limits.max_input_tokens}) is larger than "
                f"max_request_tokens ({limits.max_request_tokens}); lower max_input_tokens"
            )
        return limits


def check_base_url(value: str | None) -> str | None:
    """A ``base_url`` option: empty means the provider's default; anything else must be an
    http(s) URL (a bare ``localhost:11434`` would only fail later, as a connection error)."""
    if value is None or not value.strip():
        return None
    url = value.strip()
    if not re.match(r"^https?://[^/\s]+", url):
        raise ValueError(
            f"base_url must be an http:// or https:// URL, got {url!r}; e.g. "
            "http://localhost:11434/v1"
        )
    return url


def resolve_api_key(option: SecretStr | None, env: str, service: str) -> str:
    """The key from the options, else from ``$env``; ``MissingKeyError`` naming ``env`` if
    neither is set. The key is returned for the SDK only: never log or show it."""
    if option is not None and option.get_secret_value().strip():
        return option.get_secret_value().strip()
    value = os.environ.get(env, "").strip()
    if value:
        return value
    raise MissingKeyError(
        f"{service} needs an API key and {env} is not set; export {env}=<your key> (or set the "
        f'embedder\'s api_key option), or choose another embedder, e.g. provider = "local"'
    )
