"""``SentenceEncoder``: texts → unit vectors, as sentence-transformers computes them.

Tokenize (truncating to ``max_seq_length`` word pieces), sort by length and pad per batch, run the
numpy BERT encoder on worker threads, pool (mean / cls / max over real tokens), L2-normalise,
and put the vectors back in input order.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Protocol

import numpy as np
from tokenizers import Tokenizer

from engram import EmbedderError
from engram_local.batching import pad, plan_batches
from engram_local.loader import ModelSpec, load_weights
from engram_local.model import F32, BertEncoder, Ints, cls_pool, l2_normalize, max_pool, mean_pool
from engram_local.options import Precision
from engram_local.threads import single_threaded_blas

_POOLERS: dict[str, Callable[[F32, Ints], F32]] = {
    "mean": mean_pool,
    "cls": cls_pool,
    "max": max_pool,
}


class Encoder(Protocol):
    """Last hidden states for a padded batch, computed on the calling thread."""

    def forward(self, ids: Ints, mask: Ints) -> F32: ...


class SentenceEncoder:
    """A loaded model. Thread-safe: ``encode`` only reads the weights."""

    def __init__(
        self,
        spec: ModelSpec,
        *,
        batch_size: int,
        threads: int,
        precision: Precision = "float32",
        int8_cache: Path | None = None,
    ) -> None:
        self.spec = spec
        self.batch_size = batch_size
        self.threads = threads
        self.tokenizer = load_tokenizer(spec)
        self.encoder: Encoder
        try:
            if precision == "int8":
                from engram_local.int8 import Int8Encoder

                self.encoder = Int8Encoder(spec, cache=int8_cache)
            else:
                self.encoder = BertEncoder(spec.config, load_weights(spec))
        except KeyError as exc:
            raise EmbedderError(
                f"{spec.folder / 'model.safetensors'} has no tensor {exc}: it is not a BERT "
                f"model's weights; point model_path to a BERT-family sentence-transformers model"
            ) from None
        self._pool = _POOLERS[spec.pooling]

    @property
    def dimension(self) -> int:
        return self.spec.dimension

    def encode(self, texts: Sequence[str]) -> F32:
        """One unit-length float32 row per text, in input order."""
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        if not texts:
            return out
        sequences = [e.ids for e in self.tokenizer.encode_batch(list(texts))]
        # Enough batches to keep every thread busy, none larger than batch_size.
        size = min(self.batch_size, math.ceil(len(texts) / self.threads))
        batches = plan_batches([len(s) for s in sequences], size)

        def run(batch: list[int]) -> F32:
            ids, mask = pad([sequences[i] for i in batch])
            return l2_normalize(self._pool(self.encoder.forward(ids, mask), mask))

        with single_threaded_blas():
            if self.threads == 1 or len(batches) == 1:
                results = [run(b) for b in batches]
            else:
                with ThreadPoolExecutor(min(self.threads, len(batches))) as executor:
                    results = list(executor.map(run, batches))
        for batch, vectors in zip(batches, results, strict=True):
            out[batch] = vectors
        return out


def load_tokenizer(spec: ModelSpec) -> Tokenizer:
    """The model's fast tokenizer, truncating to ``max_seq_length`` and never padding."""
    path = spec.folder / "tokenizer.json"
    try:
        tokenizer = Tokenizer.from_file(str(path))
    except Exception as exc:
        raise EmbedderError(
            f"cannot load the tokenizer {path} ({exc}); reinstall the model files"
        ) from exc
    tokenizer.enable_truncation(spec.max_seq_length)
    tokenizer.no_padding()
    return tokenizer
