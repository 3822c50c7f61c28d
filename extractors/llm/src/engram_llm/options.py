"""The ``[extractor]`` options of the ``llm`` extractor: providers tried in order, and what
every call shares (temperature 0, a 30 s timeout, three retries from 0.5 s up to 10 s).

A provider speaks one of three protocols (``provider``): OpenAI's chat completions (OpenAI and
every compatible server: Ollama, vLLM, OpenRouter), Anthropic's Messages API, or Google's Gemini
API. Each has its own default model and key variable."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator, model_validator

from engram import DEFAULT_LEDGER_PATH, check_base_url

# USD per 1M tokens (input, output), list prices; override per provider.
CHAT_PRICES: dict[str, tuple[float, float]] = {
    "gpt-4o-mini": (0.15, 0.60),
    "gpt-4o": (2.50, 10.00),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1": (2.00, 8.00),
    "claude-haiku-4-5": (1.00, 5.00),
    "claude-sonnet-4-5": (3.00, 15.00),
    "claude-opus-4-5": (5.00, 25.00),
    "gemini-2.5-flash-lite": (0.10, 0.40),
    "gemini-2.5-flash": (0.30, 2.50),
    "gemini-2.5-pro": (1.25, 10.00),  # prompts up to 200k tokens
}

Protocol = Literal["openai", "anthropic", "google"]
DEFAULT_MODELS: dict[str, str] = {
    "openai": "gpt-4o-mini",
    "anthropic": "claude-haiku-4-5",
    "google": "gemini-2.5-flash",
}
# Where each SDK looks for its key; Google's reads GOOGLE_API_KEY first, then GEMINI_API_KEY.
KEY_VARIABLES: dict[str, tuple[str, ...]] = {
    "openai": ("OPENAI_API_KEY",),
    "anthropic": ("ANTHROPIC_API_KEY",),
    "google": ("GOOGLE_API_KEY", "GEMINI_API_KEY"),
}


class ProviderOptions(BaseModel):
    """One chat endpoint: its protocol, address, model, key and prices."""

    model_config = ConfigDict(extra="forbid", protected_namespaces=())

    provider: Protocol = Field(
        default="openai",
        description="The API spoken: openai (and compatible servers), anthropic or google.",
    )

    name: str | None = Field(
        default=None, description="A label for messages and the ledger (default: the host)."
    )
    base_url: str | None = Field(
        default=None,
        description="The API's base URL (default: the provider's), e.g. http://localhost:11434/v1.",
    )
    model: str = Field(
        default="",
        description="Default: gpt-4o-mini, claude-haiku-4-5 or gemini-2.5-flash by provider.",
    )
    api_key: SecretStr | None = Field(
        default=None, description="Better left to the environment variable."
    )
    api_key_env: str | None = Field(
        default=None,
        description="Where the key is read from (default: OPENAI_API_KEY, ANTHROPIC_API_KEY, or "
        "GOOGLE_API_KEY then GEMINI_API_KEY); empty for a server that needs none.",
    )
    price_per_million_input: float | None = Field(default=None, ge=0)
    price_per_million_output: float | None = Field(default=None, ge=0)
    json_mode: bool = Field(
        default=True,
        description="Ask for a JSON object (response_format, Anthropic's forced tool, Gemini's "
        "response schema); off for servers that refuse it.",
    )

    @model_validator(mode="after")
    def _defaults(self) -> ProviderOptions:
        if not self.model.strip():
            self.model = DEFAULT_MODELS[self.provider]
        return self

    def key_env(self) -> str:
        """The variable the key is read from: the option, else the first of the provider's
        variables that is set (the SDK's own order), else its last one (named in the error)."""
        if self.api_key_env is not None:
            return self.api_key_env
        names = KEY_VARIABLES[self.provider]
        return next((n for n in names if os.environ.get(n, "").strip()), names[-1])

    @field_validator("base_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        return check_base_url(value)

    def label(self) -> str:
        if self.name:
            return self.name
        if self.base_url:
            return urlparse(self.base_url).hostname or f"{self.provider}-compatible"
        return self.provider

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
