"""Embedding for the benchmark: through the shared on-disk cache (so a second run never embeds
SciFact again), and a ``FixedEmbedder`` that answers queries from vectors computed up front, so
search timings measure the search, not the model."""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from engram.embedding.cache import CachedEmbedder, EmbeddingCache
from engram.errors import EmbedderError
from engram.models import InputType
from engram.protocols import Embedder
from engram.registry import Registry

Matrix = npt.NDArray[np.float32]
BATCH = 256


@dataclass
class EmbedStats:
    texts: int = 0
    embedded: int = 0  # texts that reached the model (cache misses)
    seconds: float = 0.0

    @property
    def per_second(self) -> float | None:
        return self.embedded / self.seconds if self.embedded and self.seconds > 0 else None


class FixedEmbedder:
    """An ``Embedder`` with the identity of a real one that answers from a table of vectors.

    A text outside the table is an ``EmbedderError``: the benchmark prepares every query first.
    """

    def __init__(
        self, name: str, model: str, dimension: int, table: Mapping[str, Sequence[float]]
    ) -> None:
        self.name = name
        self.model = model
        self.dimension = dimension
        self._table = table

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        try:
            return [list(self._table[t]) for t in texts]
        except KeyError as exc:
            raise EmbedderError(
                f"the benchmark has no precomputed vector for {exc.args[0]!r}; embed every "
                f"query before searching"
            ) from None


def build_embedder(
    registry: Registry, name: str, options: Mapping[str, object] | None = None
) -> Embedder:
    entry = registry.get("embedder", name)
    embedder: Embedder = entry.build(entry.options.model_validate(dict(options or {})))
    return embedder


def cached(embedder: Embedder, cache_file: Path | None) -> CachedEmbedder:
    return CachedEmbedder(embedder, EmbeddingCache(cache_file) if cache_file else None)


def embed_all(
    embedder: CachedEmbedder,
    texts: Sequence[str],
    input_type: InputType,
    stats: EmbedStats,
    progress: Callable[[int, int], None] | None = None,
) -> Matrix:
    """Vectors of ``texts`` (float32 rows), in batches, counting what the model really did."""
    rows: list[list[float]] = []
    for start in range(0, len(texts), BATCH):
        before = embedder.texts_embedded
        began = time.perf_counter()
        rows.extend(embedder.embed(list(texts[start : start + BATCH]), input_type))
        if embedder.texts_embedded > before:
            stats.seconds += time.perf_counter() - began
            stats.embedded += embedder.texts_embedded - before
        if progress is not None:
            progress(min(start + BATCH, len(texts)), len(texts))
    stats.texts += len(texts)
    matrix: Matrix = np.asarray(rows, dtype=np.float32).reshape(len(rows), embedder.dimension)
    return matrix


def throughput(embedder: Embedder, texts: Sequence[str]) -> dict[str, float]:
    """Texts per second of ``embedder`` on ``texts`` (no cache), after one warm-up call."""
    embedder.embed(list(texts[:8]))
    began = time.perf_counter()
    embedder.embed(list(texts))
    seconds = time.perf_counter() - began
    return {"texts": float(len(texts)), "seconds": seconds, "per_second": len(texts) / seconds}
