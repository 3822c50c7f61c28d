"""engram-voyage: embeddings from the Voyage AI API (asymmetric: documents and queries differ).

Set ``VOYAGE_API_KEY`` and ``[embedder] provider = "voyage"``. See docs/embedders/voyage.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_voyage.options import MODELS, VoyageOptions

if TYPE_CHECKING:
    from engram_voyage.embedder import VoyageEmbedder

__all__ = ["MODELS", "VoyageEmbedder", "VoyageOptions", "register_embedders"]


def build_embedder(options: VoyageOptions) -> VoyageEmbedder:
    """The registered factory: every command loads every plugin, so httpx and the usage ledger
    are imported only when an embedder is built."""
    from engram_voyage.embedder import VoyageEmbedder

    return VoyageEmbedder(options)


def __getattr__(name: str) -> Any:
    if name == "VoyageEmbedder":
        from engram_voyage.embedder import VoyageEmbedder

        return VoyageEmbedder
    raise AttributeError(name)


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``voyage`` embedder."""
    register("voyage", build_embedder, options=VoyageOptions)
