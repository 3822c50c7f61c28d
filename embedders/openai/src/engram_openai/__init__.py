"""engram-openai: embeddings from the OpenAI API or any OpenAI-compatible server.

Set ``OPENAI_API_KEY`` and ``[embedder] provider = "openai"``. See docs/embedders/openai.md.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_openai.embedder import OpenAIEmbedder
from engram_openai.options import MODELS, OpenAIOptions

__all__ = ["MODELS", "OpenAIEmbedder", "OpenAIOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``openai`` embedder."""
    register("openai", OpenAIEmbedder, options=OpenAIOptions)
