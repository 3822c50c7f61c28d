"""The options every metered API client shares (key, timeouts, retries, limits, long texts,
ledger, price), and ``resolve_api_key``, which finds the key or names the variable to set."""

from __future__ import annotations

import os
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from engram.errors import ConfigError, MissingKeyError
from engram.usage.budget import LongTexts, RequestLimits
from engram.usage.ledger import DEFAULT_LEDGER_PATH, UsageLedger
from engram.usage.retry import RetryPolicy


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
