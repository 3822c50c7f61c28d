"""Runs txtai as a peer, in whatever Python has txtai installed (it needs PyTorch and faiss, which
engram does not): ``PYTHON txtai_worker.py JOB.json``. Standalone on purpose: it imports nothing
from engram, so the peer's environment needs only txtai.

txtai gets the same vectors as engram's stores (an ``external`` vectors method looking them up by
text), so the comparison is between the two retrieval systems, not two copies of the model. Its
defaults are kept: faiss (exact below 5,000 rows, IVF above), BM25 with normalised scores, and a
convex combination with weight 0.5 for hybrid.
"""

from __future__ import annotations

import importlib
import json
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

# txtai's search weight: 1 = dense only, 0 = keyword only, 0.5 = its hybrid default.
MODES = {"hybrid": 0.5, "vector": 1.0, "keyword": 0.0}


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def main(job_file: str) -> None:
    job = json.loads(Path(job_file).read_text())
    txtai = importlib.import_module("txtai")
    matrix = np.load(job["vectors"])
    table = {text: matrix[i] for i, text in enumerate(job["texts"])}

    def lookup(texts: list[str]) -> Any:
        return np.stack([table[t] for t in texts])

    limit = int(job["limit"])
    modes = {mode: MODES[mode] for mode in job.get("modes", MODES)}
    retrieved: dict[str, dict[str, list[str]]] = {mode: {} for mode in modes}
    latency: dict[str, list[float]] = {mode: [] for mode in modes}
    index_s = 0.0
    for group in job["groups"]:
        embeddings = txtai.Embeddings(method="external", transform=lookup, hybrid=True)
        began = time.perf_counter()
        embeddings.index([(doc_id, text, None) for doc_id, text in group["docs"]])
        index_s += time.perf_counter() - began
        for query_id, text in group["queries"]:
            for mode, weight in modes.items():
                began = time.perf_counter()
                hits = embeddings.search(text, limit, weights=weight)
                latency[mode].append(time.perf_counter() - began)
                retrieved[mode][query_id] = [str(hit[0]) for hit in hits]
        embeddings.close()
    Path(job["result"]).write_text(
        json.dumps(
            {
                "versions": {n: _version(n) for n in ("txtai", "faiss-cpu", "torch", "numpy")},
                "retrieved": retrieved,
                "latency_s": latency,
                "index_seconds": index_s,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
