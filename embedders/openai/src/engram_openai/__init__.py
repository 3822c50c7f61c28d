"""engram-openai: embeddings from the OpenAI API or any OpenAI-compatible server.

Set ``OPENAI_API_KEY`` and ``[embedder] provider = "openai"``. See docs/embedders/openai.md. The
embedder is ``engram_openai.embedder``'s ``OpenAIEmbedder``, registered by its path: every command
loads every plugin, so httpx and the usage ledger are imported only when an embedder is built.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_openai.options import MODELS, OpenAIOptions

__all__ = ["MODELS", "OpenAIOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``openai`` embedder."""
    register("openai", "engram_openai.embedder:OpenAIEmbedder", options=OpenAIOptions)
