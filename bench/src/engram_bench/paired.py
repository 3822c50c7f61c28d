"""Is hybrid search better or worse than the better single mode? A paired bootstrap over queries.

A mean nDCG@10 gap between two modes on a few hundred queries can be noise. The paired
bootstrap resamples the queries (with replacement) ``resamples`` times and takes the mean of the
per-query differences each time; the middle 95% of those means is the confidence interval. When
the whole interval is below 0 the hybrid mode is significantly worse, above 0 significantly
better, otherwise the two are not told apart by this set. Seeded, so every run of the same
rankings gives the same interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95
METRIC = "ndcg@10"
SINGLE_MODES = ("keyword", "vector")
HYBRID_MODES = ("hybrid-weighted", "hybrid-rrf", "hybrid-standout")
_BLOCK = 500  # resamples drawn at once: bounds the index matrix at BLOCK x queries


def bootstrap_ci(
    differences: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> dict[str, float]:
    """Mean of ``differences`` and the ``level`` percentile interval of its resampled means."""
    diffs = np.asarray(differences, dtype=np.float64)
    if diffs.size == 0:
        return {"mean": 0.0, "low": 0.0, "high": 0.0}
    rng = np.random.default_rng(seed)
    means = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, _BLOCK):
        count = min(_BLOCK, resamples - start)
        rows = rng.integers(0, diffs.size, size=(count, diffs.size))
        means[start : start + count] = diffs[rows].mean(axis=1)
    tail = (1.0 - level) / 2.0
    low, high = np.quantile(means, [tail, 1.0 - tail])
    return {"mean": float(diffs.mean()), "low": float(low), "high": float(high)}


def verdict(ci: Mapping[str, float]) -> str:
    """``worse`` / ``better`` when the interval excludes 0, else ``tie``."""
    if ci["high"] < 0:
        return "worse"
    if ci["low"] > 0:
        return "better"
    return "tie"


def compare_modes(
    rows: Sequence[Mapping[str, Any]], per_query: Mapping[tuple[str, str | None, str], list[float]]
) -> list[dict[str, Any]]:
    """For every store x embedder: each hybrid mode against the better single mode.

    ``per_query`` maps (store, embedder, mode) to the per-query METRIC values in one fixed query
    order; keyword rows carry embedder None and serve every embedder of their store.
    """
    out: list[dict[str, Any]] = []
    for row in rows:
        store, embedder, mode = row["store"], row["embedder"], row["mode"]
        if mode not in HYBRID_MODES:
            continue
        singles = {
            single: per_query.get((store, None if single == "keyword" else embedder, single))
            for single in SINGLE_MODES
        }
        present = {name: values for name, values in singles.items() if values}
        if not present:
            continue
        best = max(present, key=lambda name: float(np.mean(present[name])))
        hybrid = per_query[(store, embedder, mode)]
        diffs = [h - b for h, b in zip(hybrid, present[best], strict=True)]
        ci = bootstrap_ci(diffs)
        out.append(
            {
                "store": store,
                "embedder": embedder,
                "mode": mode,
                "versus": best,
                "metric": METRIC,
                "queries": len(diffs),
                **ci,
                "verdict": verdict(ci),
            }
        )
    return out


def render_paired(ds: Mapping[str, Any]) -> list[str]:
    """Each hybrid mode minus the better single mode, per query, with its bootstrap interval."""
    paired = ds.get("paired")
    if not paired:
        return []
    lines = [
        "",
        f"Hybrid minus the better single mode ({paired[0]['metric']} per query, paired "
        f"bootstrap: {RESAMPLES:,} resamples, seed {SEED}, {LEVEL:.0%} interval; `worse` / "
        "`better` only when the interval leaves 0):",
        "",
    ]
    rows = [
        [
            p["store"],
            p["embedder"] or "—",
            p["mode"],
            p["versus"],
            f"{p['mean']:+.3f}",
            f"[{p['low']:+.3f}, {p['high']:+.3f}]",
            p["verdict"],
        ]
        for p in paired
    ]
    lines.append(_table(["store", "embedder", "mode", "versus", "Δ", "95% CI", "verdict"], rows))
    return lines


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (report.py imports this module, so it has its own)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
