"""Published figures printed beside ours. Sources are in ``../shared/data/README.md`` and
docs/benchmarks.md."""

from __future__ import annotations

from typing import Any

ANCHORS: dict[str, list[dict[str, Any]]] = {
    "scifact": [
        {
            "system": "BM25, BEIR paper (Elasticsearch, title and text as fields)",
            "mode": "keyword",
            "ndcg@10": 0.665,
        },
        {
            "system": "BM25, Anserini flat (title + text)",
            "mode": "keyword",
            "ndcg@10": 0.679,
            "recall@100": 0.925,
        },
        {"system": "all-MiniLM-L6-v2, MTEB", "mode": "vector", "ndcg@10": 0.645},
        {"system": "txtai hybrid, published", "mode": "hybrid", "ndcg@10": 0.713},
    ]
}
