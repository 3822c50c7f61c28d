"""The ``[extractor]`` options of the ``llm`` extractor: providers tried in order, and what
every call shares (temperature 0, a 30 s timeout, three retries from 0.5 s up to 10 s)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from engram import DEFAULT_LEDGER_PATH, check_base_url

# USD per 1M tokens (input, output), list prices; override per provider.
CHAT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
}


class ProviderOptions(BaseModel):
    """One OpenAI-compatible chat endpoint."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    name: str | None = Field(
        default=None, description="A label for messages and the ledger (default: the host)."
    )
    base_url: str | None = Field(
        default=None,
        description="The API's base URL (default: OpenAI's), e.g. http://localhost:11434/v1.",
    )
    model: str = Field(default="gpt-4o-mini", min_length=1)
    api_key: SecretStr | None = Field(
        default=None, description="Better left to the environment variable."
    )
    api_key_env: str = Field(
        default="OPENAI_API_KEY",
        description="Where the key is read from; empty for a server that needs none.",
    )
    price_per_million_input: float | None = Field(default=None, ge=0)
    price_per_million_output: float | None = Field(default=None, ge=0)
    json_mode: bool = Field(
        default=True,
        description="Ask for a JSON object (response_format); off for servers that refuse it.",
    )

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return check_base_url(value)

    def label(self) -> str:
        if self.name:
            return self.name
        if self.base_url:
            return urlparse(self.base_url).hostname or "openai-compatible"
        return "openai"

    def prices(self) -> tuple[float | None, float | None]:
        """USD per 1M (input, output) tokens: the options', else the table's, else unknown."""
        known_in, known_out = CHAT_PRICES.get(self.model, (None, None))
        given_in, given_out = self.price_per_million_input, self.price_per_million_output
        return (
            given_in if given_in is not None else known_in,
            given_out if given_out is not None else known_out,
        )


class LLMOptions(BaseModel):
    """Every option of the ``llm`` extractor."""

    model_config = ConfigDict(extra="forbid")

    providers: list[ProviderOptions] = Field(
        default_factory=lambda: [ProviderOptions()], min_length=1
    )
    temperature: float = Field(default=0.0, ge=0, le=2)
    timeout: float = Field(default=30.0, gt=0, description="Seconds per request.")
    max_retries: int = Field(default=3, ge=0, le=10, description="Retries per provider.")
    retry_base_delay: float = Field(default=0.5, ge=0)
    retry_max_delay: float = Field(default=10.0, ge=0)
    max_output_tokens: int = Field(default=2000, ge=16, le=100_000)
    record_usage: bool = True
    ledger_path: Path = Field(default=DEFAULT_LEDGER_PATH)
