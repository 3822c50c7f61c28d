"""engram-voyage: embeddings from the Voyage AI API (asymmetric: documents and queries differ).

Set ``VOYAGE_API_KEY`` and ``[embedder] provider = "voyage"``. See docs/embedders/voyage.md.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_voyage.embedder import VoyageEmbedder
from engram_voyage.options import MODELS, VoyageOptions

__all__ = ["MODELS", "VoyageEmbedder", "VoyageOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``voyage`` embedder."""
    register("voyage", VoyageEmbedder, options=VoyageOptions)
