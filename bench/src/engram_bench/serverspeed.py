"""What the speed section measures for a server store (PostgreSQL) beside what it measures for all.

- **The raw ``COPY`` floor:** the same rows (id, document id, text, float32 vector) written with
  psycopg's ``COPY ... FROM STDIN`` (binary) into a plain table with a ``vector`` column and no
  index, in one transaction, on the same server, in the same run; no engram code. The store's
  ingest is reported as a share of it.
- **Searches per second with concurrent clients:** 1 and 4 clients, threads in this process,
  each with a store (so a connection pool and a connection) of its own over the namespace the
  speed run has just filled, each running every query once after its own warm-up; searches per
  second = all searches / the wall time from the common start to the last one done. Client and
  server share the machine's cores.
- **HNSW recall@10 against exact search** at a size past the store's ``hnsw_threshold`` (the
  threshold plus a quarter), where the store searches its HNSW index: the regular rows below the
  threshold are exact scans, so their recall says nothing about the index.
- The tables' size on the server (``pg_total_relation_size``: heap, TOAST and indexes), since the
  store keeps nothing in the run's folder.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from pgvector.psycopg import register_vector
from psycopg import sql

from engram.config import SearchConfig
from engram.models import Chunk
from engram.protocols import Store
from engram.search import HybridSearcher
from engram_bench import synthetic
from engram_bench.cliffs import WARMUP, K, exact_top_k, latency
from engram_bench.embedding import FixedEmbedder
from engram_bench.servers import dsn
from engram_bench.stores import StoreSpec, fresh_folder, release
from engram_bench.synthetic import IDENTITY_MODEL, IDENTITY_NAME, identity
from engram_bench.timing import Stopwatch

CLIENTS = (1, 4)
_In = TypeVar("_In")
Log = Callable[[str], None]


def copy_floor(server_dsn: str, data: synthetic.Corpus) -> dict[str, Any]:
    """Rows per second written with one binary ``COPY`` into a plain table (dropped after)."""
    n, dim = data.vectors.shape
    table = sql.Identifier(f"engram_bench_copy_{uuid.uuid4().hex[:12]}")
    ids = [synthetic.chunk_id(i) for i in range(n)]
    with psycopg.connect(server_dsn) as conn:
        register_vector(conn)
        conn.execute(
            sql.SQL(
                "CREATE TABLE {} (id text, document_id text, text text, embedding vector({}))"
            ).format(table, sql.Literal(int(dim)))
        )
        conn.commit()
        try:
            began = time.perf_counter()
            with (
                conn.cursor() as cur,
                cur.copy(
                    sql.SQL(
                        "COPY {} (id, document_id, text, embedding) FROM STDIN (FORMAT BINARY)"
                    ).format(table)
                ) as copy,
            ):
                copy.set_types(["text", "text", "text", "vector"])
                for i in range(n):
                    copy.write_row((ids[i], ids[i], data.texts[i], data.vectors[i]))
            conn.commit()
            seconds = time.perf_counter() - began
            row = conn.execute(sql.SQL("SELECT count(*) FROM {}").format(table)).fetchone()
            written = int(row[0]) if row else 0
        finally:
            conn.rollback()
            conn.execute(sql.SQL("DROP TABLE IF EXISTS {}").format(table))
            conn.commit()
    return {
        "what": "binary COPY FROM STDIN into a plain table (text, text, text, vector), no "
        "index, one transaction",
        "rows": written,
        "seconds": seconds,
        "rows_per_s": n / seconds if seconds > 0 else None,
    }


def table_bytes(server_dsn: str, tables: Sequence[str]) -> int:
    """Bytes of ``tables`` (qualified, quoted names) with their TOAST and indexes."""
    with psycopg.connect(server_dsn) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(pg_total_relation_size(to_regclass(t))), 0) "
            "FROM unnest(%s::text[]) AS t",
            (list(tables),),
        ).fetchone()
    return int(row[0]) if row else 0


def searches_per_second(
    spec: StoreSpec,
    folder: Path,
    make_call: Callable[[Store], Callable[[_In], object]],
    inputs: Sequence[_In],
    clients: int,
) -> dict[str, Any]:
    """``clients`` threads, each with its own store over ``folder``'s namespace, each running
    every input once after ``WARMUP`` untimed calls; searches per second over the wall time."""
    stores = [spec.build(folder) for _ in range(clients)]
    try:
        calls = [make_call(store) for store in stores]
        for call in calls:
            for item in inputs[:WARMUP]:
                call(item)
        start = threading.Barrier(clients + 1)
        failures: list[BaseException] = []

        def work(call: Callable[[_In], object]) -> None:
            try:
                start.wait()
                for item in inputs:
                    call(item)
            except BaseException as exc:  # re-raised in the caller, after every thread ends
                failures.append(exc)

        threads = [threading.Thread(target=work, args=(call,), daemon=True) for call in calls]
        for thread in threads:
            thread.start()
        start.wait()
        began = time.perf_counter()
        for thread in threads:
            thread.join()
        wall = time.perf_counter() - began
        if failures:
            raise failures[0]
    finally:
        for store in stores:
            store.close()
    searches = clients * len(inputs)
    return {
        "clients": clients,
        "searches": searches,
        "seconds": wall,
        "per_s": searches / wall if wall > 0 else None,
    }


def measure(
    spec: StoreSpec,
    data: synthetic.Corpus,
    queries: synthetic.QuerySet,
    folder: Path,
    log: Log,
) -> dict[str, Any]:
    """The server store's extras over the namespace ``folder`` names (filled by the speed run)."""
    server = dsn(spec)
    dim = data.vectors.shape[1]
    probe = spec.build(folder)
    try:
        info = probe.diagnostics()  # type: ignore[attr-defined]
    finally:
        probe.close()
    out: dict[str, Any] = {
        "postgresql": info.get("postgresql"),
        "pgvector": info.get("pgvector"),
        "hnsw_threshold": info.get("hnsw_threshold"),
        "hnsw_index": info.get("hnsw_index"),
        "chunks": info.get("chunks"),
        "table_bytes": table_bytes(server, info.get("tables", [])),
    }
    log(f"speed: {spec.name}: raw COPY floor at {len(data):,} rows")
    out["copy_floor"] = copy_floor(server, data)
    qvec = queries.vectors.tolist()
    table = {t: v for t, v in zip(queries.texts, qvec, strict=True)}

    def vector(store: Store) -> Callable[[list[float]], object]:
        return lambda v: store.vector_search(v, K)

    def hybrid(store: Store) -> Callable[[str], object]:
        searcher = HybridSearcher(SearchConfig(min_score=0.0, limit=K))
        embedder = FixedEmbedder(IDENTITY_NAME, IDENTITY_MODEL, dim, table)
        return lambda t: searcher.search(t, store, embedder, mode="hybrid", limit=K)

    concurrent: dict[str, list[dict[str, Any]]] = {"vector": [], "hybrid": []}
    for clients in CLIENTS:
        log(f"speed: {spec.name}: searches per second, {clients} client(s)")
        concurrent["vector"].append(searches_per_second(spec, folder, vector, qvec, clients))
        concurrent["hybrid"].append(
            searches_per_second(spec, folder, hybrid, queries.texts, clients)
        )
    out["concurrent"] = concurrent
    return out


def hnsw_recall(
    spec: StoreSpec,
    *,
    dim: int,
    query_count: int,
    batch: int,
    workdir: Path,
    log: Log,
) -> dict[str, Any]:
    """Recall@10 of the store's HNSW search against numpy's exact top-10, on a synthetic corpus
    a quarter past the store's ``hnsw_threshold``, in a namespace of its own."""
    options = spec.entry.options.model_validate(spec.raw_options)
    threshold = int(options.hnsw_threshold)  # type: ignore[attr-defined]
    n = threshold + max(threshold // 4, 1)
    log(f"speed: {spec.name}: HNSW recall at {n:,} chunks (threshold {threshold:,})")
    data = synthetic.corpus(n, dim)
    queries = synthetic.queries(data, query_count)
    qvec = queries.vectors.tolist()
    exact = [exact_top_k(data.vectors, q, K) for q in queries.vectors]
    numpy_ms = latency(lambda q: exact_top_k(data.vectors, q, K), list(queries.vectors))[0]
    folder = fresh_folder(workdir / f"hnsw-{spec.name}-{n}")
    store = spec.build(folder)
    try:
        store.set_identity(identity(dim))
        upsert = Stopwatch()
        for begin in range(0, n, batch):
            chunks = [
                Chunk(
                    id=synthetic.chunk_id(i),
                    document_id=synthetic.chunk_id(i),
                    text=data.texts[i],
                    vector=data.vectors[i],
                )
                for i in range(begin, min(begin + batch, n))
            ]
            with upsert.running():
                store.upsert(chunks)
        info = store.diagnostics()  # type: ignore[attr-defined]
        vector_ms, answers = latency(lambda v: store.vector_search(v, K), qvec)
    finally:
        store.close()
        release(spec, folder)
    return {
        "chunks": n,
        "dimension": dim,
        "queries": query_count,
        "hnsw_threshold": threshold,
        "hnsw_index": info.get("hnsw_index"),
        "ef_search": int(options.ef_search),  # type: ignore[attr-defined]
        "hnsw_m": int(options.hnsw_m),  # type: ignore[attr-defined]
        "hnsw_ef_construction": int(options.hnsw_ef_construction),  # type: ignore[attr-defined]
        "ingest_seconds": upsert.seconds,
        "recall_at_10": synthetic.recall([[h.chunk.id for h in hits] for hits in answers], exact),
        "vector_ms": vector_ms,
        "numpy_ms": numpy_ms,
        "vector_p50_x_numpy": vector_ms["p50"] / numpy_ms["p50"] if numpy_ms["p50"] > 0 else None,
    }
