"""Is hybrid search better or worse than the better single mode? A paired bootstrap over queries.

A mean nDCG@10 gap between two modes on a few hundred queries can be noise. The paired
bootstrap resamples the queries (with replacement) ``resamples`` times and takes the mean of the
per-query differences each time; the middle 95% of those means is the confidence interval. When
the whole interval is below 0 the hybrid mode is significantly worse, above 0 significantly
better, otherwise the two are not told apart by this set. Seeded, so every run of the same
rankings gives the same interval.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

RESAMPLES = 10_000
SEED = 0
LEVEL = 0.95
METRIC = "ndcg@10"
# Hybrid may find at most this much less than the better single mode at depth (issue 39).
RECALL = "recall@100"
RECALL_SLACK = 0.01
SINGLE_MODES = ("keyword", "vector")
HYBRID_MODES = ("hybrid-default", "hybrid-weighted", "hybrid-rrf", "hybrid-standout")
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


def half(query_id: str) -> str:
    """``dev`` or ``held-out``, by a hash of the query id: a rule tuned on the ``dev`` half of a
    set is judged on the other half (the same query falls in the same half in every run)."""
    return "dev" if hashlib.sha256(query_id.encode("utf-8")).digest()[0] % 2 == 0 else "held-out"


def compare_modes(
    rows: Sequence[Mapping[str, Any]],
    per_query: Mapping[tuple[str, str | None, str], list[float]],
    *,
    recall: Mapping[tuple[str, str | None, str], list[float]] | None = None,
    halves: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """For every store x embedder: each hybrid mode against the better single mode.

    ``per_query`` maps (store, embedder, mode) to the per-query METRIC values in one fixed query
    order; keyword rows carry embedder None and serve every embedder of their store. With
    ``halves`` (each query's ``half``), the held-out half is compared too, against the better
    single mode of that half. With ``recall`` (per-query RECALL values), the hybrid mode's mean
    recall is set against the better single mode's by that measure, less RECALL_SLACK.
    """
    out: list[dict[str, Any]] = []
    for row in rows:
        store, embedder, mode = row["store"], row["embedder"], row["mode"]
        if mode not in HYBRID_MODES:
            continue
        keys = {
            single: (store, None if single == "keyword" else embedder, single)
            for single in SINGLE_MODES
        }
        present = {name: key for name, key in keys.items() if per_query.get(key)}
        if not present:
            continue
        hybrid_key = (store, embedder, mode)
        entry: dict[str, Any] = {"store": store, "embedder": embedder, "mode": mode}
        entry.update(_paired(per_query, present, hybrid_key, None))
        if halves is not None:
            picked = [i for i, name in enumerate(halves) if name == "held-out"]
            entry["held_out"] = _paired(per_query, present, hybrid_key, picked)
        if recall is not None and all(recall.get(k) for k in [*present.values(), hybrid_key]):
            means = {name: float(np.mean(recall[key])) for name, key in present.items()}
            best = max(means, key=lambda name: means[name])
            value = float(np.mean(recall[hybrid_key]))
            entry["recall"] = {
                "metric": RECALL,
                "hybrid": value,
                "versus": best,
                "best": means[best],
                "ok": value >= means[best] - RECALL_SLACK - 1e-12,
            }
            if halves is not None:
                entry["recall"]["held_out"] = _recall(recall, present, hybrid_key, picked)
        out.append(entry)
    return out


def _recall(
    recall: Mapping[tuple[str, str | None, str], list[float]],
    singles: Mapping[str, tuple[str, str | None, str]],
    hybrid_key: tuple[str, str | None, str],
    picked: list[int],
) -> dict[str, Any]:
    """The recall check over the queries at ``picked`` (the held-out half)."""

    def mean(key: tuple[str, str | None, str]) -> float:
        values = [recall[key][i] for i in picked]
        return float(np.mean(values)) if values else 0.0

    means = {name: mean(key) for name, key in singles.items()}
    best = max(means, key=lambda name: means[name])
    value = mean(hybrid_key)
    ok = value >= means[best] - RECALL_SLACK - 1e-12
    return {"hybrid": value, "versus": best, "best": means[best], "ok": ok}


def _paired(
    per_query: Mapping[tuple[str, str | None, str], list[float]],
    singles: Mapping[str, tuple[str, str | None, str]],
    hybrid_key: tuple[str, str | None, str],
    picked: list[int] | None,
) -> dict[str, Any]:
    """Hybrid minus the better single mode over the queries at ``picked`` (all when None)."""

    def values(key: tuple[str, str | None, str]) -> list[float]:
        got = per_query[key]
        return list(got) if picked is None else [got[i] for i in picked]

    means = {
        name: float(np.mean(values(key))) if values(key) else 0.0 for name, key in singles.items()
    }
    best = max(means, key=lambda name: means[name])
    diffs = [h - b for h, b in zip(values(hybrid_key), values(singles[best]), strict=True)]
    ci = bootstrap_ci(diffs)
    return {"versus": best, "metric": METRIC, "queries": len(diffs), **ci, "verdict": verdict(ci)}


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
    header = ["store", "embedder", "mode", "versus", "Δ", "95% CI", "verdict"]
    held = any("held_out" in p for p in paired)
    recall = any("recall" in p for p in paired)
    if held:
        header += ["held-out: versus", "Δ", "95% CI", "verdict"]
    if recall:
        header += [f"{RECALL} (better single)", f"≥ better - {RECALL_SLACK}"]
    rows = []
    for p in paired:
        row = [
            p["store"],
            p["embedder"] or "—",
            p["mode"],
            *_cells(p),
        ]
        if held:
            row += _cells(p["held_out"]) if "held_out" in p else ["—"] * 4
        if recall:
            r = p.get("recall")
            row += _recall_cells(r) if r else ["—", "—"]
        rows.append(row)
    lines.append(_table(header, rows))
    if held:
        lines += [
            "",
            "Held-out: the queries whose id hashes to the `held-out` half (`paired.half`).",
        ]
    return lines


def _recall_cells(r: Mapping[str, Any]) -> list[str]:
    """Hybrid's recall (the better single mode's), and whether it is within the slack; the
    held-out half's after a slash."""
    value = f"{r['hybrid']:.3f} ({r['versus']} {r['best']:.3f})"
    ok = "yes" if r["ok"] else "**no**"
    held = r.get("held_out")
    if held:
        value += f" / {held['hybrid']:.3f} ({held['versus']} {held['best']:.3f})"
        ok += " / " + ("yes" if held["ok"] else "**no**")
    return [value, ok]


def _cells(p: Mapping[str, Any]) -> list[str]:
    return [
        p["versus"],
        f"{p['mean']:+.3f}",
        f"[{p['low']:+.3f}, {p['high']:+.3f}]",
        p["verdict"] if p["verdict"] != "worse" else "**worse**",
    ]


def _table(header: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A Markdown table (report.py imports this module, so it has its own)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)
