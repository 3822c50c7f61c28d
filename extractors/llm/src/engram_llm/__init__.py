"""engram-llm: the ``llm`` extractor, any OpenAI-compatible chat model behind engram's capture,
contradiction checks and condensing. See docs/extractors/llm.md."""

from __future__ import annotations

from engram import Register, hookimpl
from engram_llm.extractor import LLMExtractor
from engram_llm.options import LLMOptions, ProviderOptions

__all__ = ["LLMExtractor", "LLMOptions", "ProviderOptions", "register_extractors"]


@hookimpl
def register_extractors(register: Register) -> None:
    """The ``llm`` extractor."""
    register("llm", LLMExtractor, options=LLMOptions)
