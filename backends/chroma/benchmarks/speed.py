"""Measure the Chroma store: writes, vector and keyword search, keyword-index rebuild, recall.

    python backends/chroma/benchmarks/speed.py [--chunks 5000] [--server HOST:PORT]

Texts are BEIR SciFact abstracts (../shared/data/scifact, when present; random words
otherwise); vectors are 384-dim, clustered like text embeddings. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from engram import Chunk, Eq, IndexIdentity
from engram_chroma import ChromaOptions
from engram_chroma.store import ChromaStore

DIM = 384
SCIFACT = Path(__file__).resolve().parents[4] / "shared" / "data" / "scifact" / "corpus.jsonl"


def texts(n: int, rng: np.random.Generator) -> list[str]:
    if SCIFACT.is_file():
        with SCIFACT.open(encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        return [f"{r['title']} {r['text']}" for r in (rows * (n // len(rows) + 1))[:n]]
    words = [f"w{i}" for i in range(5000)]
    return [" ".join(rng.choice(words, size=200)) for _ in range(n)]


def timed(fn: Callable[[], Any], repeat: int) -> float:
    """Median milliseconds of ``repeat`` calls."""
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append((time.perf_counter() - start) * 1000)
    return round(statistics.median(runs), 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=5000)
    parser.add_argument("--server", help="HOST:PORT of a running `chroma run`")
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    centers = rng.normal(size=(200, DIM))
    matrix = centers[rng.integers(0, 200, args.chunks)] + 0.7 * rng.normal(size=(args.chunks, DIM))
    corpus = texts(args.chunks, rng)
    chunks = [
        Chunk(
            id=f"c{i}",
            document_id=f"d{i // 5}",
            text=corpus[i],
            vector=matrix[i].tolist(),
            metadata={"group": ["a", "b", "c", "d"][i % 4], "n": i},
        )
        for i in range(args.chunks)
    ]
    if args.server:
        host, port = args.server.rsplit(":", 1)
        options = ChromaOptions(
            mode="server", host=host, port=int(port), collection=f"bench{uuid.uuid4().hex[:8]}"
        )
    else:
        options = ChromaOptions(path=Path(tempfile.mkdtemp()) / "chroma")
    store = ChromaStore(options)
    store.set_identity(IndexIdentity(embedder="bench", model="random", dimension=DIM, chunker="x"))
    start = time.perf_counter()
    for i in range(0, len(chunks), 500):
        store.upsert(chunks[i : i + 500])
    write_s = time.perf_counter() - start

    queries = centers[rng.integers(0, 200, 50)] + 0.7 * rng.normal(size=(50, DIM))
    units = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    recall = []
    for q in queries:
        got = {h.chunk.id for h in store.vector_search(q.tolist(), 10)}
        best = np.argsort(-(units @ (q / np.linalg.norm(q))))[:10]
        recall.append(len(got & {f"c{i}" for i in best}) / 10)
    q0 = queries[0].tolist()
    query_text = "vitamin d deficiency cancer risk in older women"
    store.keyword_search(query_text, 10)  # build the keyword index
    result = {
        "mode": options.mode,
        "chunks": args.chunks,
        "upsert_chunks_per_s": round(args.chunks / write_s),
        "vector_ms": timed(lambda: store.vector_search(q0, 10), 30),
        "vector_filtered_ms": timed(
            lambda: store.vector_search(q0, 10, Eq(field="group", value="b")), 30
        ),
        "vector_recall_at_10": round(float(np.mean(recall)), 3),
        "keyword_ms": timed(lambda: store.keyword_search(query_text, 10), 30),
        "keyword_filtered_ms": timed(
            lambda: store.keyword_search(query_text, 10, Eq(field="group", value="b")), 30
        ),
    }
    other = ChromaStore(options.model_copy(update={"keyword_cache": Path(tempfile.mkdtemp())}))
    start = time.perf_counter()
    other.keyword_search(query_text, 10)
    result["keyword_index_rebuild_s"] = round(time.perf_counter() - start, 2)
    store.upsert([c.model_copy(update={"text": c.text + " extra"}) for c in chunks[:100]])
    start = time.perf_counter()
    other.keyword_search(query_text, 10)
    result["catch_up_after_100_foreign_writes_ms"] = round((time.perf_counter() - start) * 1000)
    print(json.dumps(result))
    other.close()
    store.close()


if __name__ == "__main__":
    main()
