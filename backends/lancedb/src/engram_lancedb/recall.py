"""Recall of the ANN index against exact search, on the same store and the same queries.

``measure_recall(store, queries)`` is what the benchmark reports for LanceDB once a table has
outgrown ``ann_threshold``. Run it on its own with::

    python -m engram_lancedb.recall --rows 100000 --dimension 384 --queries 200

which fills a throw-away store with random unit vectors, lets ``optimize()`` build the index and
prints recall@k and the latency of both searches.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from pydantic import BaseModel

from engram import Chunk, IndexIdentity
from engram_lancedb.options import AnnIndex, LanceDBOptions
from engram_lancedb.store import LanceDBStore


class RecallReport(BaseModel):
    k: int
    queries: int
    recall: float  # mean share of the exact top-k ids the index search also returns
    worst: float
    ann_ms: float
    exact_ms: float
    index: str


def measure_recall(
    store: LanceDBStore, queries: Sequence[Sequence[float]], k: int = 10
) -> RecallReport:
    """Run every query through the index and through exact search; compare the top-k ids."""
    shares: list[float] = []
    ann_seconds = exact_seconds = 0.0
    for query in queries:
        began = time.perf_counter()
        approximate = {h.chunk.id for h in store.vector_search(query, k)}
        middle = time.perf_counter()
        exact = {h.chunk.id for h in store.vector_search(query, k, exact=True)}
        exact_seconds += time.perf_counter() - middle
        ann_seconds += middle - began
        shares.append(len(approximate & exact) / len(exact) if exact else 1.0)
    n = max(len(shares), 1)
    return RecallReport(
        k=k,
        queries=len(shares),
        recall=sum(shares) / n,
        worst=min(shares, default=1.0),
        ann_ms=ann_seconds / n * 1000,
        exact_ms=exact_seconds / n * 1000,
        index=", ".join(store.diagnostics().get("indexes", [])) or "none",
    )


def random_units(rows: int, dimension: int, seed: int) -> list[list[float]]:
    rng = np.random.default_rng(seed)
    data = rng.normal(size=(rows, dimension)).astype(np.float32)
    data /= np.linalg.norm(data, axis=1, keepdims=True)
    vectors: list[list[float]] = data.tolist()
    return vectors


def fill(store: LanceDBStore, rows: int, dimension: int, *, batch: int = 5000) -> None:
    store.set_identity(
        IndexIdentity(embedder="random", model="unit", dimension=dimension, chunker="none")
    )
    vectors = random_units(rows, dimension, seed=1)
    for start in range(0, rows, batch):
        store.upsert(
            [
                Chunk(id=f"r{i}", document_id=f"d{i % 97}", text="", vector=vectors[i])
                for i in range(start, min(rows, start + batch))
            ]
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--dimension", type=int, default=384)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--index", choices=["ivf_hnsw_sq", "ivf_pq"], default="ivf_hnsw_sq")
    args = parser.parse_args(argv)
    index: AnnIndex = args.index
    with tempfile.TemporaryDirectory() as folder:
        options = LanceDBOptions(
            path=Path(folder) / "lance",
            ann_threshold=max(256, min(args.rows, 100_000)),
            ann_index=index,
            optimize_every=0,
        )
        with LanceDBStore(options) as store:
            fill(store, args.rows, args.dimension)
            built = store.optimize()
            report = measure_recall(
                store, random_units(args.queries, args.dimension, seed=2), args.k
            )
    print(f"{built.ann_index}; {report.model_dump_json()}")


if __name__ == "__main__":
    main()
