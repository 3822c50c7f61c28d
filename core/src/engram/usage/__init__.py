"""What paid APIs (embedders, the LLM extractor) use and cost, and the one way engram makes a
request to them. One module per job:

- ``ledger``: ``UsageLedger``, the SQLite file of every request (``engram usage`` reads it);
- ``prices``: ``PRICES`` in USD per million input tokens, keyed ``provider/model``; an
  embedder's ``price_per_million_tokens`` option overrides it (an unknown model costs
  "unknown", not 0);
- ``retry``: ``Meter`` runs one request with retries and records every attempt;
- ``budget``: token bounds, splitting long texts, grouping texts into requests;
- ``options``: ``ApiOptions`` every metered API embedder shares, ``resolve_api_key``.

The ledger reaches an embedder through its options (``ledger_path``, a ``Path`` that config
resolves against the project root like any plugin path), so an embedder built from config
records where ``engram usage`` reads, with no global state. Import the names below from
``engram.usage``.
"""

from engram.usage.budget import (
    LongTexts,
    RequestLimits,
    clean_text,
    embed_in_requests,
    plan_requests,
    split_text,
    token_bound,
)
from engram.usage.ledger import (
    DEFAULT_LEDGER_PATH,
    GROUPS,
    LEDGER_FILE,
    GroupBy,
    UsageLedger,
    UsageRequest,
    UsageRow,
    ledger_path,
)
from engram.usage.options import ApiOptions, check_base_url, resolve_api_key
from engram.usage.prices import PRICES, price_for
from engram.usage.retry import (
    EMBED_RETRY_HINT,
    Failure,
    MalformedResponse,
    Meter,
    RetryPolicy,
    Tokens,
    parse_retry_after,
)

__all__ = [
    "DEFAULT_LEDGER_PATH",
    "EMBED_RETRY_HINT",
    "GROUPS",
    "LEDGER_FILE",
    "PRICES",
    "ApiOptions",
    "Failure",
    "GroupBy",
    "LongTexts",
    "MalformedResponse",
    "Meter",
    "RequestLimits",
    "RetryPolicy",
    "Tokens",
    "UsageLedger",
    "UsageRequest",
    "UsageRow",
    "check_base_url",
    "clean_text",
    "embed_in_requests",
    "ledger_path",
    "parse_retry_after",
    "plan_requests",
    "price_for",
    "resolve_api_key",
    "split_text",
    "token_bound",
]
