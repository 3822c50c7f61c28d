"""Retrieval quality on real datasets: every store x embedder x search mode on the same vectors.

Documents are embedded once per embedder (through the shared cache) and every store indexes the
same vectors, so differences between stores come from the stores. Searches go through
``engram.search.HybridSearcher`` with ``min_score = 0`` (the default 0.35 is a display threshold),
except ``hybrid-default``: what `engram search` does out of the box, its cut included, so the
report shows whether the cut costs Recall@100 (issue 39). Keyword-only results do not depend on
the embedder and are run once per store. ``numpy-exact`` is brute-force cosine over the same
vectors: the vector-only ceiling that exact stores should match and ANN stores approach.

The four modes of one query ask the store the same two questions (the vector and the keyword
candidates), so a per-query memo answers the repeats: the rankings are exactly those of four
separate searches at a third of the cost. Latency is timed separately, without the memo, on the
first ``latency_queries`` queries.
"""

from __future__ import annotations

import math
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from engram.config import SearchConfig
from engram.embedding.cache import CachedEmbedder
from engram.errors import EmptyQuery
from engram.filters import Filter
from engram.models import Chunk, FusionMethod, Hit, IndexIdentity, SearchMode
from engram.protocols import Store, embedder_identity
from engram.search import HybridSearcher
from engram_bench.dataset_types import Dataset, Query
from engram_bench.embedding import EmbedStats, FixedEmbedder, Matrix, embed_all
from engram_bench.metrics import metric, metric_depth
from engram_bench.paired import METRIC as PAIRED_METRIC
from engram_bench.paired import RECALL as PAIRED_RECALL
from engram_bench.paired import compare_modes, half
from engram_bench.speed import exact_top_k
from engram_bench.stores import StoreSpec, fresh_folder, maintain, release
from engram_bench.timing import summarize_ms

Log = Callable[[str], None]
CHUNKER = "bench:one-chunk-per-document"
# Candidates each side (vector, keyword) contributes before fusion: the default multiplier (x4)
# for a top-10, the depth itself for a top-100 (a 404-deep pool costs three times as much).
DEFAULT_CANDIDATES = 40
BASELINE = "numpy-exact"


@dataclass(frozen=True)
class Mode:
    name: str
    mode: SearchMode
    fusion: FusionMethod = "weighted"
    # Other [search] options of this mode, as (key, value) pairs.
    options: tuple[tuple[str, object], ...] = ()
    # Keep the configured default min_score (the cut users get) instead of 0.
    cut: bool = False


# The default weighted fusion, RRF, and the opt-in per-query balance (so the same run compares it).
STANDOUT = (("balance", "standout"), ("vector_weight", 0.5), ("keyword_weight", 0.5))
RELATIVE = (("keyword_scale", "relative"), ("vector_weight", 0.6), ("keyword_weight", 0.4))
MODES = (
    Mode("keyword", "keyword"),
    Mode("vector", "vector"),
    # What `engram search` does out of the box: the default fusion and the default min_score.
    Mode("hybrid-default", "hybrid", "weighted", cut=True),
    Mode("hybrid-weighted", "hybrid", "weighted"),
    Mode("hybrid-rrf", "hybrid", "rrf"),
    Mode("hybrid-standout", "hybrid", "weighted", STANDOUT),
    # The fusion shipped before the ceiling scale, so each run shows what the change moved.
    Mode("hybrid-relative", "hybrid", "weighted", RELATIVE),
)


@dataclass
class Embedded:
    """A dataset's vectors from one embedder: one matrix per group, and every query's vector."""

    embedder: str
    model: str
    dimension: int
    groups: list[Matrix]
    queries: dict[str, list[float]]
    stats: EmbedStats


def embed_dataset(dataset: Dataset, embedder: CachedEmbedder, log: Log) -> Embedded:
    stats = EmbedStats()
    name = f"{dataset.name}/{embedder.name}"
    groups: list[Matrix] = []
    for group in dataset.groups:

        def progress(done: int, total: int, label: str = group.name) -> None:
            if total >= 1000 and (done % 1024 == 0 or done == total):
                log(f"  embedding {name} {label}: {done:,}/{total:,}")

        groups.append(
            embed_all(embedder, [d.text for d in group.docs], "document", stats, progress)
        )
    texts = list(dict.fromkeys(q.text for g in dataset.groups for q in g.queries))
    matrix = embed_all(embedder, texts, "query", stats)
    if stats.embedded:
        log(
            f"  embedded {stats.embedded:,} texts of {name} in {stats.seconds:.1f}s "
            f"({stats.per_second or 0:.1f}/s); {stats.texts - stats.embedded:,} from the cache"
        )
    return Embedded(
        embedder.name,
        embedder.model,
        embedder.dimension,
        groups,
        dict(zip(texts, matrix.tolist(), strict=True)),
        stats,
    )


def evaluate(dataset: Dataset, retrieved: dict[str, list[str]]) -> dict[str, Any]:
    """Mean of each of the dataset's metrics over its queries, overall and per category."""
    totals: dict[str, float] = defaultdict(float)
    by_cat: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    n = 0
    for group in dataset.groups:
        for query in group.queries:
            ids = retrieved.get(query.id, [])
            n += 1
            for name in dataset.metrics:
                value = metric(name, ids, query.qrels)
                totals[name] += value
                if query.category is not None:
                    by_cat[query.category][name] += value
            if query.category is not None:
                by_cat[query.category]["queries"] += 1
    per_category = {
        cat: {
            **{m: v / values["queries"] for m, v in values.items() if m != "queries"},
            "queries": values["queries"],
        }
        for cat, values in sorted(by_cat.items())
    }
    return {
        "metrics": {m: totals[m] / n if n else 0.0 for m in dataset.metrics},
        "per_category": per_category,
        "queries": n,
    }


def per_query(dataset: Dataset, retrieved: dict[str, list[str]]) -> dict[str, list[float]]:
    """The paired comparison's metrics (nDCG@10, and Recall@100 where the set measures it) for
    every query, in the dataset's query order."""
    names = [PAIRED_METRIC] + [m for m in (PAIRED_RECALL,) if m in dataset.metrics]
    return {
        name: [
            metric(name, retrieved.get(query.id, []), query.qrels)
            for group in dataset.groups
            for query in group.queries
        ]
        for name in names
    }


def _depth(dataset: Dataset) -> int:
    return max(metric_depth(m) for m in dataset.metrics)


def _limit(dataset: Dataset) -> int:
    """Hits to ask for: the depth, plus one when a self-hit may have to be dropped."""
    return _depth(dataset) + (1 if dataset.ignore_identical_ids else 0)


def _clean(dataset: Dataset, query: Query, ids: list[str], depth: int) -> list[str]:
    if dataset.ignore_identical_ids:
        ids = [i for i in ids if i != query.id]
    return ids[:depth]


def numpy_exact(dataset: Dataset, embedded: Embedded) -> dict[str, Any]:
    """Brute-force cosine top-k over the dataset's vectors: the vector-only reference."""
    depth = _depth(dataset)
    retrieved: dict[str, list[str]] = {}
    samples: list[float] = []
    for group, matrix in zip(dataset.groups, embedded.groups, strict=True):
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        unit = (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)
        for query in group.queries:
            vector = np.asarray(embedded.queries[query.text], dtype=np.float32)
            began = time.perf_counter()
            rows = exact_top_k(unit, vector, depth + 1)
            samples.append(time.perf_counter() - began)
            ids = [group.docs[r].id for r in rows]
            retrieved[query.id] = _clean(dataset, query, ids, depth)
    return {
        "store": BASELINE,
        "embedder": embedded.embedder,
        "mode": "vector",
        **evaluate(dataset, retrieved),
        "latency_ms": summarize_ms(samples),
    }


class _Memo:
    """A store wrapper that remembers this query's ``vector_search`` / ``keyword_search``
    answers; everything else goes to the store. ``clear()`` between queries."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self.capabilities = store.capabilities
        self._answers: dict[tuple[object, ...], list[Hit]] = {}

    def clear(self) -> None:
        self._answers.clear()

    def get_identity(self) -> IndexIdentity | None:
        return self._store.get_identity()

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        key = ("vector", tuple(vector), k)
        if filter is not None:
            return self._store.vector_search(vector, k, filter)
        if key not in self._answers:
            self._answers[key] = self._store.vector_search(vector, k, filter)
        return self._answers[key]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        key = ("keyword", query, k)
        if filter is not None:
            return self._store.keyword_search(query, k, filter)
        if key not in self._answers:
            self._answers[key] = self._store.keyword_search(query, k, filter)
        return self._answers[key]

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)


def multiplier(limit: int, candidates: int) -> int:
    """The searcher's candidate multiplier that fetches at least ``candidates`` hits per side
    (and never fewer than ``limit``)."""
    return max(1, math.ceil(candidates / limit))


def run_store(
    dataset: Dataset,
    spec: StoreSpec,
    embedded: Embedded,
    folder: Path,
    *,
    with_keyword: bool,
    latency_queries: int,
    candidates: int = DEFAULT_CANDIDATES,
) -> list[dict[str, Any]]:
    """Index every group of ``dataset`` in a fresh ``spec`` store and run every mode."""
    depth = _depth(dataset)
    limit = _limit(dataset)
    modes = [m for m in MODES if with_keyword or m.mode != "keyword"]
    retrieved: dict[str, dict[str, list[str]]] = {m.name: {} for m in modes}
    samples: dict[str, list[float]] = {m.name: [] for m in modes}
    embedder = FixedEmbedder(
        embedded.embedder, embedded.model, embedded.dimension, embedded.queries
    )
    searchers = {
        m.name: HybridSearcher(
            SearchConfig.model_validate(
                {
                    "min_score": SearchConfig().min_score if m.cut else 0.0,
                    "fusion": m.fusion,
                    "limit": limit,
                    "candidate_multiplier": multiplier(limit, candidates),
                    **dict(m.options),
                }
            )
        )
        for m in modes
    }
    index_s = 0.0
    optimized_s: float | None = None
    fresh_folder(folder)
    store = spec.build(folder)
    try:
        for number, (group, matrix) in enumerate(zip(dataset.groups, embedded.groups, strict=True)):
            if number:
                store.reset()
            store.set_identity(embedder_identity(embedder, CHUNKER))
            index_s += index_docs(store, group.docs, matrix)
            optimize_s = maintain(store)
            if optimize_s is not None:
                optimized_s = (optimized_s or 0.0) + optimize_s
            memo = _Memo(store)
            for query in group.queries:
                memo.clear()
                timed = len(samples[modes[0].name]) < latency_queries
                for m in modes:
                    if timed:
                        began = time.perf_counter()
                        _search(searchers[m.name], query.text, store, embedder, m, limit)
                        samples[m.name].append(time.perf_counter() - began)
                    hits = _search(
                        searchers[m.name], query.text, cast(Store, memo), embedder, m, limit
                    )
                    ids = [h.chunk.id for h in hits]
                    retrieved[m.name][query.id] = _clean(dataset, query, ids, depth)
    finally:
        store.close()
    rows = []
    for m in modes:
        rows.append(
            {
                "store": spec.name,
                "embedder": None if m.mode == "keyword" else embedded.embedder,
                "mode": m.name,
                **evaluate(dataset, retrieved[m.name]),
                "per_query": per_query(dataset, retrieved[m.name]),
                "latency_ms": summarize_ms(samples[m.name]),
                "index_seconds": index_s,
                "optimize_seconds": optimized_s,
            }
        )
    return rows


def _search(
    searcher: HybridSearcher,
    text: str,
    store: Store,
    embedder: FixedEmbedder,
    mode: Mode,
    limit: int,
) -> list[Hit]:
    try:
        return searcher.search(text, store, embedder, mode=mode.mode, limit=limit).hits
    except EmptyQuery:
        return []


def index_docs(store: Store, docs: list[Any], matrix: Matrix, batch: int = 500) -> float:
    rows = matrix.tolist()
    seconds = 0.0
    for start in range(0, len(docs), batch):
        chunks = [
            Chunk(id=doc.id, document_id=doc.id, text=doc.text, vector=rows[start + i])
            for i, doc in enumerate(docs[start : start + batch])
        ]
        began = time.perf_counter()
        store.upsert(chunks)
        seconds += time.perf_counter() - began
    return seconds


def run_dataset(
    dataset: Dataset,
    embedded: list[Embedded],
    specs: list[StoreSpec],
    *,
    workdir: Path,
    latency_queries: int,
    log: Log,
    candidates: int = DEFAULT_CANDIDATES,
    floor_on_every_store: bool = True,
) -> dict[str, Any]:
    """Every store with every embedder's vectors on one dataset, plus the numpy reference.
    Without ``floor_on_every_store`` the embedders after the first (the hash floor) run on
    numpy and the first store only: a floor says what the embedder is worth more than what the
    store is, and skipping it elsewhere nearly halves the section's time."""
    rows: list[dict[str, Any]] = [numpy_exact(dataset, e) for e in embedded]
    errors: list[dict[str, str]] = []
    for place, spec in enumerate(specs):
        for number, emb in enumerate(embedded):
            if number and place and not floor_on_every_store:
                continue
            log(f"quality: {dataset.name} on {spec.name} with {emb.embedder}")
            folder = workdir / f"quality-{dataset.name}-{spec.name}-{emb.embedder}"
            try:
                rows.extend(
                    run_store(
                        dataset,
                        spec,
                        emb,
                        folder,
                        with_keyword=number == 0,
                        latency_queries=latency_queries,
                        candidates=candidates,
                    )
                )
            except Exception as exc:  # recorded; the other stores still run
                message = f"{type(exc).__name__}: {exc}"
                errors.append({"store": spec.name, "embedder": emb.embedder, "error": message})
                log(f"quality: {spec.name}/{emb.embedder} failed: {message}")
            finally:
                release(spec, folder)
    values = {(r["store"], r["embedder"], r["mode"]): r.pop("per_query", None) for r in rows}
    found = {key: v for key, v in values.items() if v is not None}
    halves = [half(q.id) for g in dataset.groups for q in g.queries]
    return {
        "dataset": dataset.name,
        "kind": dataset.kind,
        "path": str(dataset.path),
        "metrics": list(dataset.metrics),
        "notes": dataset.notes,
        "category_labels": dataset.category_labels,
        "docs": dataset.doc_count,
        "queries": dataset.query_count,
        "candidates_per_side": _limit(dataset) * multiplier(_limit(dataset), candidates),
        "floor_on_every_store": floor_on_every_store,
        "embedding": {
            e.embedder: {
                "model": e.model,
                "dimension": e.dimension,
                "texts": e.stats.texts,
                "embedded_now": e.stats.embedded,
                "seconds": e.stats.seconds,
                "per_second": e.stats.per_second,
            }
            for e in embedded
        },
        "rows": rows,
        # Each hybrid mode against the better single mode, per query (engram_bench.paired).
        "paired": compare_modes(
            rows,
            {key: v[PAIRED_METRIC] for key, v in found.items()},
            recall={key: v[PAIRED_RECALL] for key, v in found.items() if PAIRED_RECALL in v},
            halves=halves,
        ),
        "errors": errors,
    }
