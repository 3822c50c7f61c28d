"""engram-llm: the ``llm`` extractor, any OpenAI-compatible chat model behind engram's capture,
contradiction checks and condensing. See docs/extractors/llm.md."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_llm.options import LLMOptions, ProviderOptions

if TYPE_CHECKING:
    from engram_llm.extractor import LLMExtractor

__all__ = ["LLMExtractor", "LLMOptions", "ProviderOptions", "register_extractors"]


def build_extractor(options: LLMOptions) -> LLMExtractor:
    """The registered factory: every command loads every plugin, so the judge and the HTTP client
    are imported only when an extractor is built."""
    from engram_llm.extractor import LLMExtractor

    return LLMExtractor(options)


def __getattr__(name: str) -> Any:
    if name == "LLMExtractor":
        from engram_llm.extractor import LLMExtractor

        return LLMExtractor
    raise AttributeError(name)


@hookimpl
def register_extractors(register: Register) -> None:
    """The ``llm`` extractor."""
    register("llm", build_extractor, options=LLMOptions)
