"""Speed and scale on a synthetic corpus: ingest, query latency, ANN recall, disk, memory, open.

For each scale the physical baseline is measured first, in the same run and on the same matrix:
exact brute-force top-k with numpy (the floor for vector search), and writing the vectors and
texts to one file with fsync (the floor for ingest). Every store figure is reported next to it.

Ingest times ``Store.upsert`` alone, on validated ``Chunk`` objects built beforehand (their vectors
are the corpus's float32 rows, as an embedder hands them over). How fast
chunks can be built (validated, and with ``Chunk.model_construct``) is measured on the first
batch and reported beside it: both are far faster than any store, so building never dominates.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from engram.config import SearchConfig
from engram.models import Chunk
from engram.protocols import Store
from engram.search import HybridSearcher
from engram_bench import synthetic
from engram_bench.cliffs import (
    WARMUP,
    K,
    after_changes,
    in_turn,
    latency,
    one_after_the_other,
    paired,
)
from engram_bench.cliffs import exact_top_k as exact_top_k  # its old home, still imported
from engram_bench.embedding import FixedEmbedder
from engram_bench.stores import StoreSpec, fresh_folder, maintain, release
from engram_bench.synthetic import IDENTITY_MODEL, IDENTITY_NAME, identity
from engram_bench.timing import (
    Stopwatch,
    folder_bytes,
    peak_rss_mb,
    reset_peak_rss,
    rss_mb,
    summarize_ms,
)

# Stores that hold every vector as Python floats (about 12 KB a chunk at 384 dims) would need
# more memory than the machine has at the largest scales; they are skipped there, with a note.
MAX_CHUNKS = {"memory": 200_000}
# Stores on a server: measured also against a raw COPY floor, with concurrent clients, and for
# HNSW recall past their threshold (serverspeed).
SERVER_STORES = frozenset({"postgres"})

Log = Callable[[str], None]


def measure_baseline(
    data: synthetic.Corpus, queries: synthetic.QuerySet, workdir: Path
) -> tuple[dict[str, Any], list[list[int]]]:
    """numpy exact top-k latency and a raw-file ingest floor; returns the exact answers too."""
    matrix = data.vectors
    path = workdir / "baseline.bin"
    began = time.perf_counter()
    with path.open("wb") as fh:
        fh.write(matrix.tobytes())
        fh.write("\n".join(data.texts).encode("utf-8"))
        fh.flush()
        os.fsync(fh.fileno())
    write_s = time.perf_counter() - began
    disk = path.stat().st_size
    path.unlink()
    for q in queries.vectors[:WARMUP]:
        exact_top_k(matrix, q, K)
    samples: list[float] = []
    answers: list[list[int]] = []
    for q in queries.vectors:
        start = time.perf_counter()
        answers.append(exact_top_k(matrix, q, K))
        samples.append(time.perf_counter() - start)
    return {
        "what": "numpy exact top-10 over the float32 matrix; ingest = one file write + fsync",
        "ingest_chunks_per_s": len(data) / write_s,
        "vector_ms": summarize_ms(samples),
        "disk_bytes": disk,
        "matrix_mib": matrix.nbytes / 2**20,
    }, answers


def measure_store(
    spec: StoreSpec,
    data: synthetic.Corpus,
    queries: synthetic.QuerySet,
    exact: list[list[int]],
    folder: Path,
    *,
    batch: int,
    cold_open: bool,
    log: Log,
) -> dict[str, Any]:
    """Ingest ``data`` into a fresh ``spec`` store and time what users wait for."""
    fresh_folder(folder)
    gc.collect()
    windowed = reset_peak_rss()
    rss_before = rss_mb()
    dim = data.vectors.shape[1]
    store = spec.build(folder)
    out: dict[str, Any] = {"store": spec.name, "version": spec.version}
    try:
        store.set_identity(identity(dim))
        out.update(_ingest(store, data, batch, log))
        qvec = queries.vectors.tolist()
        caps = store.capabilities
        if "vector" in caps:
            out["first_query"] = _first_queries(spec, store, folder, qvec)
        out["optimize_seconds"] = maintain(store)
        out["count"] = store.count()
        table = {t: v for t, v in zip(queries.texts, qvec, strict=True)}
        embedder = FixedEmbedder(IDENTITY_NAME, IDENTITY_MODEL, dim, table)
        searcher = HybridSearcher(SearchConfig(min_score=0.0, limit=K))
        if "vector" in caps:
            answers = latency(lambda v: store.vector_search(v, K), qvec)
            out["vector_ms"] = answers[0]
            out["ann_recall_at_10"] = synthetic.recall(
                [[h.chunk.id for h in hits] for hits in answers[1]], exact
            )
        if "keyword" in caps:
            out["keyword_ms"] = latency(lambda t: store.keyword_search(t, K), queries.texts)[0]
        out["hybrid_ms"] = latency(
            lambda t: searcher.search(t, store, embedder, mode="hybrid", limit=K), queries.texts
        )[0]
        if "vector" in caps:
            numpy_floor = lambda v: exact_top_k(data.vectors, v, K)  # noqa: E731

            def hybrid(target: Store) -> Callable[[str], object]:
                return lambda t: searcher.search(t, target, embedder, mode="hybrid", limit=K)

            out["paired"] = {
                "vector": paired(numpy_floor, lambda v: store.vector_search(v, K), qvec, qvec)
            }
            # A store that can run the halves at once is also timed without, in the same turns.
            halves = one_after_the_other(store)
            targets = [store] if halves is None else [store, halves]
            floor_ms, hybrid_ms = in_turn(
                numpy_floor, [hybrid(t) for t in targets], qvec, queries.texts
            )
            for name, ms in zip(["hybrid", "hybrid_one_after_the_other"], hybrid_ms, strict=False):
                out["paired"][name] = (floor_ms, ms)
            out["after_changes"] = after_changes(store, data, qvec, batch)
        out["peak_rss_mib"] = peak_rss_mb()
        out["rss_before_mib"] = rss_before
        out["peak_rss_scope"] = "this store's run" if windowed else "whole process"
        persistent = "persistent" in caps
    finally:
        store.close()
    if persistent:
        out["disk_bytes"] = folder_bytes(folder)
        out["reopen_ms"] = _reopen(spec, folder, qvec[0])
        if cold_open:
            out["cold_open"] = _cold_open(spec, folder, qvec[0])
    return out


def _ingest(store: Store, data: synthetic.Corpus, batch: int, log: Log) -> dict[str, Any]:
    upsert = Stopwatch()
    n = len(data)
    build: dict[str, float | None] = {}
    for start in range(0, n, batch):
        stop = min(start + batch, n)
        rows = data.vectors[start:stop]  # float32 rows: Chunk keeps them, no list round trip
        if start == 0:
            build = _chunk_build_rates(data, rows, stop)
        chunks = [
            Chunk(
                id=synthetic.chunk_id(i),
                document_id=synthetic.chunk_id(i),
                text=data.texts[i],
                vector=rows[i - start],
            )
            for i in range(start, stop)
        ]
        with upsert.running():
            store.upsert(chunks)
        if stop % (batch * 20) == 0:
            log(f"    {stop:,}/{n:,} chunks")
    return {
        "ingest_seconds": upsert.seconds,
        "ingest_chunks_per_s": n / upsert.seconds if upsert.seconds > 0 else None,
        "batch_size": batch,
        "chunk_build_per_s": build,
    }


def _first_queries(
    spec: StoreSpec, store: Store, folder: Path, qvec: list[list[float]]
) -> dict[str, float | None]:
    """Milliseconds of the first vector query right after the bulk ingest (no ``optimize``):
    in the writing store, and in the store opened again (as ``engram search`` after ``engram
    index``). A store that builds its index on first use shows it here."""
    began = time.perf_counter()
    store.vector_search(qvec[0], K)
    same = (time.perf_counter() - began) * 1000.0
    reopened: float | None = None
    if "persistent" in store.capabilities:
        other = spec.build(folder)
        try:
            began = time.perf_counter()
            other.vector_search(qvec[1 % len(qvec)], K)
            reopened = (time.perf_counter() - began) * 1000.0
        finally:
            other.close()
    return {"same_store_ms": same, "reopened_ms": reopened}


def _chunk_build_rates(
    data: synthetic.Corpus, rows: npt.NDArray[np.float32], stop: int
) -> dict[str, float | None]:
    """Chunks per second built with validation and with ``model_construct`` (best of three), to
    show whether building the input, rather than the store, could dominate an ingest figure."""
    best = {"validated": float("inf"), "model_construct": float("inf")}
    for _ in range(3):
        began = time.perf_counter()
        for i in range(stop):
            Chunk(id=synthetic.chunk_id(i), document_id="d", text=data.texts[i], vector=rows[i])
        best["validated"] = min(best["validated"], time.perf_counter() - began)
        began = time.perf_counter()
        for i in range(stop):
            Chunk.model_construct(
                id=synthetic.chunk_id(i),
                document_id="d",
                text=data.texts[i],
                vector=rows[i],
                metadata={},
                document_hash="",
            )
        best["model_construct"] = min(best["model_construct"], time.perf_counter() - began)
    return {key: stop / s if s > 0 else None for key, s in best.items()}


def _reopen(spec: StoreSpec, folder: Path, vector: list[float]) -> float:
    """Milliseconds to open the store again in this process and answer one vector query."""
    began = time.perf_counter()
    store = spec.build(folder)
    try:
        store.count()
        store.vector_search(vector, K)
        return (time.perf_counter() - began) * 1000.0
    finally:
        store.close()


def _cold_open(spec: StoreSpec, folder: Path, vector: list[float]) -> dict[str, Any]:
    """A fresh Python process: import engram and this store's plugin, open, first query."""
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job.json"
        result = Path(tmp) / "result.json"
        options = dict(spec.raw_options)
        job.write_text(
            json.dumps(
                {
                    "store": spec.name,
                    "options": {
                        k: str(v) if isinstance(v, Path) else v for k, v in options.items()
                    },
                    "folder": str(folder),
                    "vector": vector,
                    "k": K,
                    "result": str(result),
                }
            )
        )
        env = dict(os.environ)
        if spec.entry.distribution and spec.entry.distribution != "engram-kit-core":
            env["ENGRAM_LOAD_PLUGINS"] = spec.entry.distribution
        began = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "engram_bench.coldopen", str(job)],
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        wall = time.perf_counter() - began
        if proc.returncode != 0 or not result.exists():
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
            return {"error": f"exit {proc.returncode}: {tail[0]}"}
        out: dict[str, Any] = json.loads(result.read_text())
        out["process_wall_ms"] = wall * 1000.0
        return out


def run_speed(
    specs: list[StoreSpec],
    scales: list[int],
    *,
    workdir: Path,
    dim: int,
    query_count: int,
    batch: int,
    cold_open: bool,
    log: Log,
) -> dict[str, Any]:
    """Every store at every scale, smallest first; a failing store is recorded, not fatal."""
    runs: list[dict[str, Any]] = []
    for n in sorted(scales):
        log(f"speed: generating {n:,} synthetic chunks ({dim} dims)")
        data = synthetic.corpus(n, dim)
        queries = synthetic.queries(data, query_count)
        baseline, exact = measure_baseline(data, queries, workdir)
        log(f"speed: numpy baseline p50 {baseline['vector_ms']['p50']:.2f} ms at {n:,}")
        rows: list[dict[str, Any]] = []
        for spec in specs:
            limit = MAX_CHUNKS.get(spec.name)
            if limit is not None and n > limit:
                rows.append(
                    {
                        "store": spec.name,
                        "skipped": f"above {limit:,} chunks the in-memory reference store needs "
                        f"about {n * 12 // 1_000_000:,} GB of Python objects",
                    }
                )
                continue
            log(f"speed: {spec.name} at {n:,} chunks")
            folder = workdir / f"speed-{spec.name}-{n}"
            try:
                row = measure_store(
                    spec,
                    data,
                    queries,
                    exact,
                    folder,
                    batch=batch,
                    cold_open=cold_open,
                    log=log,
                )
                rows.append(row)
                if spec.name in SERVER_STORES:
                    row["server"] = _server_extras(spec, data, queries, folder, log)
                    if "table_bytes" in row["server"]:  # the run's folder holds none of it
                        row["disk_bytes"] = row["server"]["table_bytes"]
                        row["disk_scope"] = "the namespace's tables and indexes on the server"
            except Exception as exc:  # one store's failure must not hide the others' numbers
                rows.append({"store": spec.name, "error": f"{type(exc).__name__}: {exc}"})
                log(f"speed: {spec.name} failed: {type(exc).__name__}: {exc}")
            finally:
                release(spec, folder)
        _add_ratios(baseline, rows)
        runs.append(
            {
                "chunks": n,
                "dimension": dim,
                "queries": query_count,
                "baseline": baseline,
                "stores": rows,
            }
        )
        del data
        gc.collect()
    out: dict[str, Any] = {"k": K, "runs": runs}
    hnsw = {
        spec.name: _hnsw_recall(spec, dim, query_count, batch, workdir, log)
        for spec in specs
        if spec.name in SERVER_STORES
    }
    if hnsw:
        out["hnsw_recall"] = hnsw
    return out


def _server_extras(
    spec: StoreSpec,
    data: synthetic.Corpus,
    queries: synthetic.QuerySet,
    folder: Path,
    log: Log,
) -> dict[str, Any]:
    """A server store's raw ``COPY`` floor, concurrent clients and table size (serverspeed);
    a failure there is recorded beside the row's other figures."""
    from engram_bench import serverspeed  # psycopg: only with the postgres store installed

    try:
        return serverspeed.measure(spec, data, queries, folder, log)
    except Exception as exc:
        log(f"speed: {spec.name} server figures failed: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}


def _hnsw_recall(
    spec: StoreSpec, dim: int, query_count: int, batch: int, workdir: Path, log: Log
) -> dict[str, Any]:
    from engram_bench import serverspeed

    try:
        return serverspeed.hnsw_recall(
            spec, dim=dim, query_count=query_count, batch=batch, workdir=workdir, log=log
        )
    except Exception as exc:
        log(f"speed: {spec.name} HNSW recall failed: {type(exc).__name__}: {exc}")
        return {"error": f"{type(exc).__name__}: {exc}"}


def _add_ratios(baseline: dict[str, Any], rows: list[dict[str, Any]]) -> None:
    """Each latency's p50 as a multiple of numpy's p50; ingest as a share of the file floor."""
    floor = baseline["vector_ms"]["p50"]
    for row in rows:
        ratios: dict[str, float] = {}
        for key in ("vector_ms", "keyword_ms", "hybrid_ms"):
            if key in row and floor > 0:
                ratios[key.removesuffix("_ms") + "_p50_x_numpy"] = row[key]["p50"] / floor
        ratios.update(_cliff_ratios(row))
        cps = row.get("ingest_chunks_per_s")
        if cps:
            ratios["ingest_share_of_file_floor"] = cps / baseline["ingest_chunks_per_s"]
        ratios.update(_server_ratios(row))
        row["ratios"] = ratios


def _server_ratios(row: dict[str, Any]) -> dict[str, float]:
    """A server store's ingest as a share of its raw ``COPY`` floor, and how searches per second
    grow from 1 client to the most measured."""
    server = row.get("server") or {}
    ratios: dict[str, float] = {}
    floor = (server.get("copy_floor") or {}).get("rows_per_s")
    cps = row.get("ingest_chunks_per_s")
    if floor and cps:
        ratios["ingest_share_of_copy_floor"] = cps / floor
    for mode, runs in (server.get("concurrent") or {}).items():
        if len(runs) > 1 and runs[0]["per_s"]:
            ratios[f"{mode}_per_s_{runs[-1]['clients']}_clients_x_1"] = (
                runs[-1]["per_s"] / runs[0]["per_s"]
            )
    return ratios


def _cliff_ratios(row: dict[str, Any]) -> dict[str, float]:
    """Paired ratios (each against numpy timed in turn with it) and the first query's multiple
    of the store's own p50."""
    ratios: dict[str, float] = {}
    changes = row.get("after_changes")
    if changes and changes["numpy_ms"]["p50"] > 0:
        paired = changes["numpy_ms"]["p50"]
        ratios["after_changes_vector_p50_x_numpy"] = changes["vector_ms"]["p50"] / paired
    for mode, (paired_floor, paired_ms) in row.get("paired", {}).items():
        if paired_floor["p50"] > 0:
            ratios[f"{mode}_p50_x_paired_numpy"] = paired_ms["p50"] / paired_floor["p50"]
    first = row.get("first_query")
    if first and "vector_ms" in row and row["vector_ms"]["p50"] > 0:
        p50 = row["vector_ms"]["p50"]
        for key in ("same_store_ms", "reopened_ms"):
            if first.get(key) is not None:
                ratios[f"first_query_{key.removesuffix('_ms')}_x_p50"] = first[key] / p50
    return ratios
