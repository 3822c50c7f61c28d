"""List prices of the paid APIs engram calls, for the usage ledger's cost estimates."""

from __future__ import annotations

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


def price_for(provider: str, model: str, override: float | None = None) -> float | None:
    """USD per 1M input tokens: the override when given, else ``PRICES``, else unknown."""
    if override is not None:
        return override
    return PRICES.get(f"{provider}/{model}")
