"""Which protocol a provider entry speaks (``provider``: openai, anthropic, google): the one place
that knows every protocol's module, each imported only when an entry names it (an unused SDK
costs nothing at start-up). The protocols share ``engram_llm.chat.ChatProvider``."""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable

from engram import UsageLedger
from engram_llm.chat import ChatProvider
from engram_llm.options import LLMOptions, ProviderOptions


def make_provider(
    options: ProviderOptions,
    shared: LLMOptions,
    *,
    ledger: UsageLedger | None,
    sleep: Callable[[float], None] = time.sleep,
    random: Callable[[], float] = _random.random,
) -> ChatProvider:
    """The provider speaking ``options.provider``'s protocol (its module imported now, its SDK
    on the first request)."""
    kind: type[ChatProvider]
    if options.provider == "anthropic":
        from engram_llm.anthropic_chat import AnthropicProvider

        kind = AnthropicProvider
    elif options.provider == "google":
        from engram_llm.google_chat import GoogleProvider

        kind = GoogleProvider
    else:
        from engram_llm.openai_chat import OpenAIProvider

        kind = OpenAIProvider
    return kind(options, shared, ledger=ledger, sleep=sleep, random=random)
