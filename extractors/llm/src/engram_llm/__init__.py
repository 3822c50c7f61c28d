"""engram-llm: the ``llm`` extractor, any OpenAI-compatible chat model behind engram's capture,
contradiction checks and condensing. See docs/extractors/llm.md.

The extractor is ``engram_llm.extractor``'s ``LLMExtractor``, registered by its path: every
command loads every plugin, so the judge and the HTTP client are imported only when an extractor
is built.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_llm.options import LLMOptions, ProviderOptions

__all__ = ["LLMOptions", "ProviderOptions", "register_extractors"]


@hookimpl
def register_extractors(register: Register) -> None:
    """The ``llm`` extractor."""
    register("llm", "engram_llm.extractor:LLMExtractor", options=LLMOptions)
