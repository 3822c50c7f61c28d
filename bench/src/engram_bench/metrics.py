"""Ranking metrics as BEIR computes them (pytrec_eval): nDCG@k with graded gains and Recall@k.

- ``ndcg_at_k``: DCG = sum over the first ``k`` retrieved ids of ``rel / log2(rank + 1)`` (rank
  from 1; ``rel`` is the qrel grade, 0 when unjudged); the ideal DCG sorts every judged grade
  above 0, best first, and cuts at ``k``. A query with no relevant id scores 0.
- ``recall_at_k``: relevant ids (grade > 0) among the first ``k`` retrieved, over all relevant ids.

Retrieved lists are taken as ranked; repeated ids count once (their first place), as a
dictionary-based evaluator would.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from engram.errors import ConfigError

Qrels = Mapping[str, int]


def _dedupe(retrieved: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(retrieved))


def dcg(gains: Sequence[float]) -> float:
    """Discounted cumulative gain of gains listed in rank order (rank 1 first)."""
    return sum(g / math.log2(rank + 1) for rank, g in enumerate(gains, start=1))


def ndcg_at_k(retrieved: Sequence[str], qrels: Qrels, k: int) -> float:
    """Normalised DCG of the first ``k`` retrieved ids against graded ``qrels``."""
    _check_k(k)
    ideal = dcg(sorted((g for g in qrels.values() if g > 0), reverse=True)[:k])
    if ideal == 0:
        return 0.0
    gains = [max(0, qrels.get(doc, 0)) for doc in _dedupe(retrieved)[:k]]
    return dcg(gains) / ideal


def recall_at_k(retrieved: Sequence[str], qrels: Qrels, k: int) -> float:
    """Share of the relevant ids (grade > 0) found in the first ``k`` retrieved ids."""
    _check_k(k)
    relevant = {doc for doc, g in qrels.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(_dedupe(retrieved)[:k])) / len(relevant)


def metric(name: str, retrieved: Sequence[str], qrels: Qrels) -> float:
    """A metric by its report name: ``ndcg@10``, ``recall@100`` …"""
    kind, _, depth = name.partition("@")
    if not depth.isdigit():
        raise ConfigError(f"metric {name!r} needs a depth, e.g. ndcg@10 or recall@100")
    if kind == "ndcg":
        return ndcg_at_k(retrieved, qrels, int(depth))
    if kind == "recall":
        return recall_at_k(retrieved, qrels, int(depth))
    raise ConfigError(f"unknown metric {name!r}; use ndcg@K or recall@K")


def metric_depth(name: str) -> int:
    """How many results ``name`` looks at (``ndcg@10`` → 10)."""
    depth = name.partition("@")[2]
    if not depth.isdigit():
        raise ConfigError(f"metric {name!r} needs a depth, e.g. ndcg@10 or recall@100")
    return int(depth)


def _check_k(k: int) -> None:
    if k < 1:
        raise ConfigError(f"a metric depth k must be at least 1, got {k}; use e.g. ndcg@10")
