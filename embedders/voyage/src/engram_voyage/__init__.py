"""engram-voyage: embeddings from the Voyage AI API (asymmetric: documents and queries differ).

Set ``VOYAGE_API_KEY`` and ``[embedder] provider = "voyage"``. See docs/embedders/voyage.md. The
embedder is ``engram_voyage.embedder``'s ``VoyageEmbedder``, registered by its path: every command
loads every plugin, so httpx and the usage ledger are imported only when an embedder is built.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_voyage.options import MODELS, VoyageOptions

__all__ = ["MODELS", "VoyageOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``voyage`` embedder."""
    register("voyage", "engram_voyage.embedder:VoyageEmbedder", options=VoyageOptions)
