"""engram-openai: embeddings from the OpenAI API or any OpenAI-compatible server.

Set ``OPENAI_API_KEY`` and ``[embedder] provider = "openai"``. See docs/embedders/openai.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_openai.options import MODELS, OpenAIOptions

if TYPE_CHECKING:
    from engram_openai.embedder import OpenAIEmbedder

__all__ = ["MODELS", "OpenAIEmbedder", "OpenAIOptions", "register_embedders"]


def build_embedder(options: OpenAIOptions) -> OpenAIEmbedder:
    """The registered factory: every command loads every plugin, so httpx and the usage ledger
    are imported only when an embedder is built."""
    from engram_openai.embedder import OpenAIEmbedder

    return OpenAIEmbedder(options)


def __getattr__(name: str) -> Any:
    if name == "OpenAIEmbedder":
        from engram_openai.embedder import OpenAIEmbedder

        return OpenAIEmbedder
    raise AttributeError(name)


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``openai`` embedder."""
    register("openai", build_embedder, options=OpenAIOptions)
