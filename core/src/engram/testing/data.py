"""Deterministic test data shared by the suites: chunks, vectors, an identity."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from engram.models import Chunk, IndexIdentity

DIMENSION = 8
IDENTITY = IndexIdentity(embedder="suite", model="random-unit", dimension=DIMENSION, chunker="none")
OTHER_IDENTITY = IndexIdentity(
    embedder="other", model="elsewhere", dimension=DIMENSION, chunker="none"
)
WORDS = ["alpha", "bravo", "delta", "echo", "golf", "hotel", "kilo", "lima", "oscar", "papa"]


def unit_vector(seed: int, dimension: int = DIMENSION) -> list[float]:
    v = np.random.default_rng(seed).normal(size=dimension)
    return [float(x) for x in v / np.linalg.norm(v)]


def chunk(
    i: int, *, text: str | None = None, document_id: str | None = None, **metadata: Any
) -> Chunk:
    """Chunk number ``i``: stable id, text, vector and metadata, all derived from ``i``."""
    rng = np.random.default_rng(10_000 + i)
    words = text if text is not None else " ".join(rng.choice(WORDS, size=int(rng.integers(2, 8))))
    meta: dict[str, Any] = {
        "n": i,
        "group": ["a", "b", "c"][i % 3],
        "day": f"2026-03-{1 + i % 28:02}",
    }
    if i % 4 == 0:
        meta["tags"] = ["even", f"t{i % 3}"]
    if i % 5 == 0:
        del meta["group"]
    meta.update(metadata)
    return Chunk(
        id=f"chunk-{i}",
        document_id=document_id or f"doc-{i % 5}",
        text=words,
        vector=unit_vector(i),
        metadata=meta,
        document_hash=f"h{i % 5}",
    )


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return float(sum(x * y for x, y in zip(a, b, strict=True))) / (na * nb)
