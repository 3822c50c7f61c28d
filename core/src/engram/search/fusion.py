"""Score fusion: how a store's vector and keyword hits become one ranked list (weighted or RRF),
and the re-ranking steps after it (best hit per document, recency).

Score scales, so fused numbers mean the same thing for every backend:

- a store's vector hit carries cosine similarity (-1..1);
- a store's keyword hit carries a positive BM25 relevance ``s`` (for SQLite's ``bm25()``, whose
  rank is negative, ``s = -rank``);
- weighted fusion mixes cosine clipped to [0, 1] with the keyword score scaled into [0, 1]:
  by default over the query's ceiling (``s / ceiling`` capped at 1, ``keyword_scale =
  "ceiling"``), the score a chunk of average length holding each of the query's words once
  would get (``engram.protocols.KeywordCeiling``; the theoretical maximum normalisation of
  Bruch et al., "An Analysis of Fusion Functions for Hybrid Retrieval", 2023); relative to the
  query's best keyword hit (``s / max s``) where the store cannot tell the ceiling, or
  ``keyword_scale = "relative"``; or ``s / (1 + s)`` (``"saturating"``). BM25 magnitudes grow
  with the corpus and the query (a one-note match in a small vault scores near 0; SciFact's
  best hits score 16-52), so a fixed curve either drowns the keyword signal or flattens it: on
  SciFact the saturating scale gives nDCG@10 0.685, below keyword search alone (0.687), and
  the relative scale 0.728. The relative scale gives the best keyword hit the whole keyword
  part even when it shares one common word with a long request; over the ceiling that hit
  gets the share of the request's weight it holds. The fused
  score is in [0, 1] and ``min_score`` applies to it (and to cosine in vector mode); reciprocal
  rank fusion (RRF) scores are on another scale (at most ``2 / (k + 1)``) and keyword-only BM25
  magnitudes depend on the corpus size, so ``min_score`` never applies to those.

Weighted fusion never lets the keyword side win on noise. Even over the ceiling every keyword
hit can be a stray-word match, so the keyword weight is scaled by how much the best hit stands
out: ``standout = 1 - mean(bm25) / max(bm25)`` over the
keyword candidates (0 when they all score alike, near 1 when one towers over the rest), and the
weight used is ``keyword_weight * (floor + (1 - floor) * standout)`` with ``floor =
keyword_standout_floor`` (0.35). A keyword-only hit gets its true cosine when the store returns
the chunk's vector (instead of 0, which sank good keyword matches the vector side had cut off).
The defaults (ceiling scale, weights 0.5 / 0.5, floor 0.35) were chosen on the dev halves of
the bench's ten public sets (the setting whose worst dev-half difference from the better single
mode was highest); on every held-out half the default is not significantly below the better
single mode. docs/benchmarks.md has the report.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from datetime import datetime

import numpy as np

from engram.candidates import Candidates, Keys, Scores
from engram.errors import ConfigError, StoreError
from engram.filters import parse_iso
from engram.models import FusionBalance, Hit, KeywordScale, Metadata
from engram.search.candidates import HitPool
from engram.search.ranked import Fused, Names, ranked_fused


def normalize_keyword(score: float) -> float:
    """Map a positive BM25 relevance ``s`` to ``s / (1 + s)`` in [0, 1) (keyword-only scores,
    and weighted fusion with ``keyword_scale = "saturating"``).

    A negative or non-finite score is a store bug (usually SQLite's raw ``bm25()`` rank, which is
    negative): it raises instead of being clamped, so the bug cannot hide as "no keyword match".
    """
    if not math.isfinite(score) or score < 0:
        raise StoreError(
            f"keyword score {score!r} is not a positive relevance; a store must return BM25 "
            f"relevance > 0 (for SQLite's bm25() rank r, return -r)"
        )
    return score / (1.0 + score)


def _weights(vector_weight: float, keyword_weight: float) -> tuple[float, float]:
    for label, w in (("vector_weight", vector_weight), ("keyword_weight", keyword_weight)):
        if not math.isfinite(w) or w < 0:
            raise ConfigError(f"search.{label} must be a number >= 0, got {w!r}")
    total = vector_weight + keyword_weight
    if total <= 0:
        raise ConfigError(
            "search.vector_weight and search.keyword_weight are both 0; set at least one above 0"
        )
    return vector_weight / total, keyword_weight / total


def _merged(vector: Candidates, keyword: Candidates) -> tuple[list[int], list[int]]:
    """Merged by key (a key names one chunk in both halves, ``engram.candidates``): the keyword
    candidates the vector side lacks, and each keyword candidate's place in the merged list
    (the vector candidates, then those)."""
    place = {key: i for i, key in enumerate(vector.keys.tolist())}
    only: list[int] = []
    k_place: list[int] = []
    for j, key in enumerate(keyword.keys.tolist()):
        i = place.get(key)
        if i is None:
            i = len(place) + len(only)
            only.append(j)
        k_place.append(i)
    return only, k_place


def _merged_names(vector: Candidates, keyword: Candidates, only: list[int]) -> Names:
    """The ids of ``vector`` then of the keyword candidates at ``only``."""
    return lambda: vector.ids + [keyword.ids[j] for j in only] if only else vector.ids


def single(candidates: Candidates, scores: Scores, *, vector: bool) -> Fused:
    """One side's candidates ranked by ``scores`` (vector or keyword mode)."""
    raw = candidates.scores
    none = np.full(len(raw), np.nan)
    return ranked_fused(
        lambda: candidates.ids,
        candidates.keys,
        scores,
        raw if vector else none,
        none if vector else raw,
    )


def ranked(hits: list[Hit]) -> list[Hit]:
    """Best score first; ties broken by chunk id so every run ranks alike."""
    return sorted(hits, key=lambda h: (-h.score, h.chunk.id))


def fuse_weighted(
    vector_hits: Sequence[Hit],
    keyword_hits: Sequence[Hit],
    vector_weight: float = 0.7,
    keyword_weight: float = 0.3,
    keyword_scale: KeywordScale = "relative",
    *,
    standout_floor: float = 1.0,
    query_vector: Sequence[float] | None = None,
    balance: FusionBalance = "fixed",
    ceiling: float | None = None,
) -> list[Hit]:
    """``weighted`` over hit lists (see there); a keyword-only chunk's cosine comes from its
    vector when the hit carries one; ``ceiling`` is the query's keyword ceiling, if known."""
    pool = HitPool()
    vector, keyword = pool.add(vector_hits), pool.add(keyword_hits)

    def cosines(keys: Keys) -> Scores:
        if query_vector is None:
            return np.full(len(keys), np.nan)
        return pool.key_scores(keys, query_vector)

    fused = weighted(
        vector,
        keyword,
        vector_weight,
        keyword_weight,
        keyword_scale,
        standout_floor=standout_floor,
        cosines=cosines,
        balance=balance,
        ceiling=ceiling,
    )
    return fused.hits(pool.chunks_for(fused.keys))


def weighted(
    vector: Candidates,
    keyword: Candidates,
    vector_weight: float = 0.7,
    keyword_weight: float = 0.3,
    keyword_scale: KeywordScale = "relative",
    *,
    standout_floor: float = 1.0,
    cosines: Callable[[Keys], Scores] | None = None,
    balance: FusionBalance = "fixed",
    ceiling: float | None = None,
) -> Fused:
    """Merge store candidates by chunk id: ``wv * clip(cosine, 0, 1) + wk * keyword part``, where
    the keyword part is ``min(1, bm25 / ceiling)`` (``"ceiling"``, when the query's ceiling
    is known), ``bm25 / best bm25 of these hits`` (``"relative"``, and
    ``"ceiling"`` without one) or ``normalize_keyword(bm25)`` (``"saturating"``).

    Inputs are store candidates (scores in the store's scale). Weights are rescaled to sum to 1,
    so every fused score is in [0, 1]; with ``standout_floor`` below 1 the keyword weight shrinks
    when no keyword hit stands out (see the module docstring); with ``balance = "standout"`` both
    weights are set per query by ``balance_weights`` instead, and a chunk the keyword side did
    not return gets the weakest keyword part of the list. A chunk the keyword side found and
    the vector side did not gets its cosine with the query from ``keyword.cosines`` when the
    store gave them, else from ``cosines(keys)`` (one call for all of them; NaN where the chunk
    has no vector), else 0; a side that did not find a chunk
    otherwise counts 0. The raw cosine and BM25 values are kept as the side scores.
    """
    wv, wk = _weights(vector_weight, keyword_weight)
    keyword_scores = keyword.scores.tolist()
    keyword_part = _keyword_scaler(keyword_scores, keyword_scale, ceiling)
    unmatched = 0.0  # the keyword part of a chunk the keyword side did not return
    if balance == "standout":
        parts = keyword_part(np.asarray(keyword_scores, dtype=np.float64)).tolist()
        wv, wk = balance_weights(vector.scores.tolist(), parts, wv, wk)
        # It scored at most the weakest keyword candidate: that is its floor, not 0, else a
        # chunk just past the keyword cut-off would lose the whole spread of the keyword list.
        # A list without spread (one hit, or all alike) gives no floor: then it stays 0.
        if len(parts) >= 2 and max(parts) > min(parts):
            unmatched = min(parts)
    else:
        wk *= standout_floor + (1.0 - standout_floor) * keyword_standout(keyword_scores)
        wv = 1.0 - wk if wv > 0 else 0.0
    only, k_place = _merged(vector, keyword)
    keys = np.concatenate([vector.keys, keyword.keys[only]])
    v_raw = np.full(len(keys), np.nan)
    v_raw[: len(vector)] = vector.scores
    if len(only) and keyword.cosines is not None:
        v_raw[len(vector) :] = keyword.cosines[only]
    elif len(only) and cosines is not None:
        v_raw[len(vector) :] = cosines(keyword.keys[only])
    k_raw = np.full(len(keys), np.nan)
    k_raw[k_place] = keyword.scores
    k_part = np.full(len(keys), unmatched)
    k_part[k_place] = keyword_part(keyword.scores)
    # Ufuncs rather than np.clip / np.where (a search fuses once, on ~80 entries: the calls'
    # own cost is most of it); fmax takes a missing cosine (NaN) as 0.
    score = wv * np.minimum(np.fmax(v_raw, 0.0), 1.0) + wk * k_part
    score = np.minimum(np.maximum(score, 0.0), 1.0)
    return ranked_fused(_merged_names(vector, keyword, only), keys, score, v_raw, k_raw)


# Tuned on SciFact (nDCG@10 0.737 / 0.739 / 0.7405 for 1 / 2 / 2 with the keyword floor, base
# weights 0.5 / 0.5), checked on LoCoMo, Cranfield and CISI (docs/benchmarks.md).
CONFIDENCE_POWER = 2


def balance_weights(
    vector_scores: Sequence[float],
    keyword_parts: Sequence[float],
    vector_weight: float,
    keyword_weight: float,
) -> tuple[float, float]:
    """Per-query weights for ``clip(cosine)`` and the keyword part, summing to 1.

    Each side counts by how far its best hit stands above its own candidates, in standard
    deviations (``z`` of the top hit), per unit of that side's spread: ``w = base * z**2 / sd``.
    The blend then ranks like a sum of z-scores weighted by confidence (squared, so the clearly
    more confident side leads), yet stays in [0, 1] on the cosine scale. Cosines of a query's
    candidates lie close together (a spread of a few hundredths) while keyword parts span 0..1,
    so fixed weights let a keyword part of the same size outweigh any cosine gap; scaled by
    spread, neither side's units win by themselves, and a side whose best hit stands out of
    nothing (stray words, a flat list) weighs little or nothing: the other, confident side
    ranks. A side without hits weighs 0 (hybrid then ranks as the other mode); with a single
    hit on a side, or no spread on either, the base weights stand.
    """
    wv, wk = _weights(vector_weight, keyword_weight)
    if not keyword_parts:
        return (1.0, 0.0) if vector_scores else (wv, wk)
    if not vector_scores:
        return 0.0, 1.0
    if len(vector_scores) < 2 or len(keyword_parts) < 2:
        return wv, wk
    v_conf, v_spread = _top_z(vector_scores)
    k_conf, k_spread = _top_z(keyword_parts)
    av = wv * v_conf**CONFIDENCE_POWER / v_spread if v_spread > 0 else 0.0
    ak = wk * k_conf**CONFIDENCE_POWER / k_spread if k_spread > 0 else 0.0
    if av + ak <= 0:
        return wv, wk
    return av / (av + ak), ak / (av + ak)


def _top_z(scores: Sequence[float]) -> tuple[float, float]:
    """(how many standard deviations the best score stands above the mean, the deviation)."""
    if len(scores) < 2:
        return 0.0, 0.0
    arr = np.asarray(scores, dtype=np.float64)
    spread = float(arr.std())
    if spread == 0 or not math.isfinite(spread):
        return 0.0, 0.0
    return max(0.0, float(arr.max() - arr.mean()) / spread), spread


def passes_min_score(hit: Hit, min_score: float) -> bool:
    """Whether a weighted-fusion hit clears ``min_score``: its fused score or its cosine does,
    or the keyword side matched it.

    The threshold means "relevant enough to show", and hybrid never hides what a single mode
    shows: the fused score of a hit only the vector side found is diluted by the missing keyword
    part, so judging it by the fused score alone dropped hits that vector mode shows (``kitten``
    → the cats note at cosine 0.44, fused 0.27); and keyword mode shows every match (BM25 has no
    fixed scale), so judging keyword matches by cosine dropped them (issue 39: Recall@100 0.747
    against keyword search's 0.920 on a dialogue-memory set)."""
    if hit.score >= min_score or hit.keyword_score is not None:
        return True
    return hit.vector_score is not None and hit.vector_score >= min_score


def keyword_standout(scores: Sequence[float]) -> float:
    """How far the best keyword score stands above the list's mean, in [0, 1]: 0 when every hit
    scores the same (typical of stray-word matches), 1 for fewer than two hits."""
    if len(scores) < 2:
        return 1.0
    best = max(scores)
    if best <= 0:
        return 0.0
    return min(1.0, max(0.0, 1.0 - (sum(scores) / len(scores)) / best))


def _keyword_scaler(
    scores: Sequence[float], scale: KeywordScale, ceiling: float | None = None
) -> Callable[[Scores], Scores]:
    """The map from BM25 relevances to [0, 1] for one query's keyword hits: ``s / ceiling``
    capped at 1 (``"ceiling"``, when the store told the query's ceiling; else relative),
    ``s / best s`` (``"relative"``) or ``s / (1 + s)`` (``"saturating"``)."""
    values = np.asarray(scores, dtype=np.float64)
    if not (np.isfinite(values).all() and (values >= 0).all()):
        for score in scores:
            normalize_keyword(score)  # refuses raw (negative) ranks and non-finite scores
    if scale == "saturating":
        return lambda s: s / (1.0 + s)
    if scale not in ("relative", "ceiling"):
        raise ConfigError(
            f"search.keyword_scale must be ceiling, relative or saturating, got {scale!r}"
        )
    if scale == "ceiling" and ceiling is not None and math.isfinite(ceiling) and ceiling > 0:
        top = ceiling
        return lambda s: np.minimum(1.0, s / top)
    best = max(scores, default=0.0)
    if best <= 0:
        return lambda s: np.zeros_like(s)
    return lambda s: np.minimum(1.0, s / best)


def fuse_rrf(vector_hits: Sequence[Hit], keyword_hits: Sequence[Hit], k: int = 60) -> list[Hit]:
    """``rrf`` over hit lists."""
    pool = HitPool()
    fused = rrf(pool.add(vector_hits), pool.add(keyword_hits), k)
    return fused.hits(pool.chunks_for(fused.keys))


def rrf(vector: Candidates, keyword: Candidates, k: int = 60) -> Fused:
    """Reciprocal rank fusion: ``sum(1 / (k + rank))`` over the lists that hold a chunk.

    Ranks count from 1 in the order given (stores return best first). Only ranks matter, so the
    raw scores are kept as the side scores for display.
    """
    if k < 0:
        raise ConfigError(f"search.rrf_k must be >= 0, got {k}; the usual value is 60")
    only, k_place = _merged(vector, keyword)
    keys = np.concatenate([vector.keys, keyword.keys[only]])
    scores = np.zeros(len(keys))
    scores[: len(vector)] = 1.0 / (k + np.arange(1, len(vector) + 1))
    scores[k_place] += 1.0 / (k + np.arange(1, len(keyword) + 1))
    v_raw = np.concatenate([vector.scores, np.full(len(only), np.nan)])
    k_raw = np.full(len(keys), np.nan)
    k_raw[k_place] = keyword.scores
    return ranked_fused(_merged_names(vector, keyword, only), keys, scores, v_raw, k_raw)


def best_per_document(hits: Sequence[Hit]) -> list[Hit]:
    """The first (best-ranked) hit of each document, in rank order."""
    seen: set[str] = set()
    best = []
    for hit in hits:
        if hit.chunk.document_id not in seen:
            seen.add(hit.chunk.document_id)
            best.append(hit)
    return best


def apply_recency(hits: Sequence[Hit], weight: float, decay: float, now: float) -> list[Hit]:
    """Blend how new each hit is into its score: ``score * (1 - w) + w * exp(-decay * age)``,
    ``age`` in days from the chunk's ``updated_at``, ``created_at`` or ``timestamp`` (a memory's
    frontmatter, a session turn). A hit with no date gets no recency part. Re-ranked, best
    first; the original score stays readable from ``vector_score`` / ``keyword_score``."""
    if weight <= 0:
        return list(hits)
    out = []
    for hit in hits:
        stamp = _hit_time(hit.chunk.metadata)
        fresh = 0.0
        if stamp is not None:
            age_days = max(0.0, (now - stamp.timestamp()) / 86_400.0)
            fresh = math.exp(-decay * age_days)
        out.append(hit.model_copy(update={"score": hit.score * (1 - weight) + weight * fresh}))
    return ranked(out)


def _hit_time(meta: Metadata) -> datetime | None:
    for key in ("updated_at", "created_at", "timestamp"):
        value = meta.get(key)
        if isinstance(value, str) and (stamp := parse_iso(value)) is not None:
            return stamp
    return None
