"""The run's results as files: JSON (everything), Markdown (the tables a reader needs) and PNG
plots. Every table sits under the machine, versions and same-run baseline it was measured with."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engram_bench import startup
from engram_bench.memory import render_memory
from engram_bench.paired import render_paired
from engram_bench.report_pipeline import render_pipeline
from engram_bench.report_tables import Row, fmt, mib, ms, table


def write_json(results: dict[str, Any], path: Path) -> Path:
    path.write_text(json.dumps(results, indent=1, sort_keys=False, default=str) + "\n")
    return path


def _header(results: dict[str, Any]) -> list[str]:
    m = results["machine"]
    v = results["versions"]
    libs = ", ".join(f"{k} {val}" for k, val in v["libraries"].items())
    plugins = ", ".join(f"{k} = {val}" for k, val in v["plugins"].items())
    load = f"{m.get('load_average_start')} → {m.get('load_average_end')}"
    lines = [
        f"# engram benchmark — {results['date']} on {results['machine_slug']}",
        "",
        f"- **Machine:** {m['cpu']}, {m['cores']} usable cores ({m['logical_cpus']} logical), "
        f"{m['memory_gib']} GiB RAM; {m['platform']}; Python {m['python']}",
        f"- **Load average (1/5/15 min) at start → end:** {load} "
        "(other work on the machine slows every figure; compare ratios to the baseline)",
        f"- **Versions:** {libs}; SQLite (stdlib) {v['sqlite_stdlib']}",
        f"- **Plugins:** {plugins}",
        f"- **Run:** `{results['command']}` — {results['duration_s'] / 60:.1f} min wall, "
        f"{results.get('cpu_s', 0) / 60:.1f} min CPU "
        f"({'quick smoke configuration' if results['config']['quick'] else 'full configuration'})"
        + (f", engram at commit `{results['revision']}`" if results.get("revision") else ""),
    ]
    for name, server in results.get("servers", {}).items():
        lines.append(f"- **Server of store {name}:** {server}")
    for name, note in results.get("skipped_stores", {}).items():
        lines.append(f"- **Store {name} skipped:** {note}")
    for note in results.get("notes", []):
        lines.append(f"- {note}")
    return lines


def _quality(results: dict[str, Any], images: dict[str, str]) -> list[str]:
    quality = results.get("quality")
    if not quality:
        return []
    lines = ["", "## 1. Retrieval quality", ""]
    lines.append(
        "Same vectors in every store (one chunk per document/turn); `HybridSearcher` with "
        "`min_score = 0`, except `hybrid-default`: the shipped defaults, its `min_score` cut "
        "included; keyword-only does not depend on the embedder (one row per store). "
        "`numpy-exact` is brute-force cosine over the same vectors. Hybrid modes fuse "
        "at least max(depth, --candidates) candidates from each side. Latency: p50 over the first "
        f"{results['config']['quality_latency_queries']} queries, full search call."
    )
    for ds in quality["datasets"]:
        lines += _quality_dataset(results, ds, images)
    return lines


def _quality_dataset(
    results: dict[str, Any], ds: dict[str, Any], images: dict[str, str]
) -> list[str]:
    """One dataset's section: notes, the table of every store and mode, anchors, plots."""
    metrics = ds["metrics"]
    lines = ["", f"### {ds['dataset']} ({ds['kind']})", ""]
    lines += _dataset_notes(ds)
    lines.append("")
    rows: list[Row] = [
        [
            r["store"],
            r["embedder"] or "—",
            r["mode"],
            *[r["metrics"][m] for m in metrics],
            ms(r["latency_ms"]["p50"]),
        ]
        for r in ds["rows"]
    ]
    rows += _peer_rows(results, ds["dataset"], metrics)
    lines.append(table(["store", "embedder", "mode", *metrics, "p50 ms"], rows))
    lines += render_paired(ds)
    for err in ds.get("errors", []):
        lines.append(f"\n- **{err['store']} / {err['embedder']} failed:** {err['error']}")
    anchors = results.get("anchors", {}).get(ds["dataset"])
    if anchors:
        lines += ["", "Published anchors:", ""]
        lines.append(
            table(
                ["system", "mode", *metrics],
                [[a["system"], a["mode"], *[a.get(m) for m in metrics]] for a in anchors],
            )
        )
    if ds["category_labels"] and any(r["per_category"] for r in ds["rows"]):
        lines += _categories(ds)
    for name in (ds["dataset"], f"{ds['dataset']}-categories"):
        if name in images:
            alt = f"{name} quality" if name == ds["dataset"] else name
            lines += ["", f"![{alt}]({images[name]})"]
    return lines


def _dataset_notes(ds: dict[str, Any]) -> list[str]:
    """The lines above a dataset's table: its notes, fusion depth, embedders and index times."""
    lines = [f"- {note}" for note in ds["notes"]]
    if "candidates_per_side" in ds:
        lines.append(f"- hybrid fusion over {ds['candidates_per_side']} candidates per side")
    if len(ds["embedding"]) > 1 and not ds.get("floor_on_every_store", True):
        first, *others = ds["embedding"]
        lines.append(
            f"- {', '.join(others)} (the floor) ran on numpy-exact and the first store only; "
            f"every store ran {first} (`--floor-on-first-store`; the default runs all)"
        )
    for name, e in ds["embedding"].items():
        rate = f", {e['per_second']:.1f} texts/s" if e.get("per_second") else ""
        cached = e["texts"] - e["embedded_now"]
        rest = f", {cached:,} from the cache" if cached else ", none from the cache"
        lines.append(
            f"- embedder {name} ({e['model']}, {e['dimension']} dims): {e['texts']:,} texts, "
            f"{e['embedded_now']:,} embedded in this run{rate}{rest}"
        )
    timings = _index_times(ds["rows"])
    if timings:
        lines.append(f"- indexing the precomputed vectors: {timings}")
    return lines


def _peer_rows(results: dict[str, Any], dataset: str, metrics: list[str]) -> list[Row]:
    rows: list[Row] = []
    for peer, info in (results.get("peers") or {}).get("peers", {}).items():
        for r in info.get("rows", []):
            if r["dataset"] == dataset:
                rows.append(
                    [
                        f"{peer} {info.get('version', '')}".strip(),
                        r["embedder"],
                        r["mode"],
                        *[r["metrics"][m] for m in metrics],
                        ms(r["latency_ms"]["p50"]),
                    ]
                )
    return rows


def _categories(ds: dict[str, Any]) -> list[str]:
    labels = ds["category_labels"]
    cats = sorted({c for r in ds["rows"] for c in r["per_category"]})
    metrics = ds["metrics"]
    counts = ds["rows"][0]["per_category"]
    header = ["store", "embedder", "mode"] + [
        f"{c} {labels.get(c, '')} (n={int(counts.get(c, {}).get('queries', 0))})" for c in cats
    ]
    rows = []
    for r in ds["rows"]:
        cells = []
        for c in cats:
            values = r["per_category"].get(c)
            cells.append(" / ".join(f"{values[m]:.3f}" for m in metrics) if values else "—")
        rows.append([r["store"], r["embedder"] or "—", r["mode"], *cells])
    return [
        "",
        f"Per category ({' / '.join(metrics)}):",
        "",
        table(header, rows),
    ]


def _peers(results: dict[str, Any]) -> list[str]:
    peers = results.get("peers")
    if peers is None:
        return []
    lines = ["", "## 4. Peers", ""]
    if not peers.get("peers"):
        return [*lines, "No peer was requested."]
    for name, info in peers["peers"].items():
        if info["status"] != "ran":
            lines.append(f"- **{name}:** {info['status']}. {info.get('hint', '')}".rstrip())
            continue
        versions: dict[str, str | None] = next((r.get("versions") or {} for r in info["rows"]), {})
        shown = ", ".join(f"{k} {v}" for k, v in versions.items() if v)
        lines.append(
            f"- **{name}** ({shown}; run by `{peers['python']}`): same vectors as engram's first "
            "embedder, txtai's defaults (faiss: exact below 5,000 rows, IVF above; BM25 with "
            "normalised scores; hybrid = convex combination, weight 0.5). Its rows are in the "
            "quality tables above."
        )
        for err in info.get("errors", []):
            lines.append(f"- **{name} failed:** {err}")
    return lines


def _index_times(rows: list[dict[str, Any]]) -> str:
    """``store embedder: upsert s (+ optimize s)`` once per store and embedder."""
    seen: dict[tuple[str, str], str] = {}
    for r in rows:
        if r.get("index_seconds") is None or r["embedder"] is None:
            continue
        text = f"{r['index_seconds']:.1f} s"
        if r.get("optimize_seconds") is not None:
            text += f" + optimize {r['optimize_seconds']:.1f} s"
        seen.setdefault((r["store"], r["embedder"]), text)
    return "; ".join(f"{store}/{embedder} {text}" for (store, embedder), text in seen.items())


def _speed(results: dict[str, Any], images: dict[str, str]) -> list[str]:
    speed = results.get("speed")
    if not speed:
        return []
    lines = ["", "## 2. Speed and scale", ""]
    lines.append(
        "Synthetic corpus (clustered unit vectors, Zipf-like pseudo-words; deterministic). "
        "Ingest = `Store.upsert` only, precomputed vectors, batches of "
        f"{results['config']['batch_size']}. Latency: top-{speed['k']}, "
        f"{results['config']['speed_queries']} queries, after 3 warm-up calls. "
        "`x numpy` = p50 over the same-run numpy exact top-k p50; ingest share = chunks/s over "
        "the raw file-write floor; a store with an `optimize()` step (LanceDB) runs it once after "
        "ingest, as after a large import, and its time follows the rate. ANN recall@10 against "
        "numpy exact. First query = the first vector query right after the bulk ingest, "
        "before any `optimize()`, in the writing store and in the store opened again, as a "
        "multiple of the store's own vector p50; then 5,000 stored vectors are replaced and "
        "vector latency is measured again, each query timed in turn with numpy over the changed "
        "matrix (x that paired numpy p50). Paired = vector and hybrid p50 again, each query timed "
        "in turn with numpy's exact top-k, so both see the same load on a shared machine. "
        "Reopen = build the store again in this process + count + first query; cold open = a new "
        "Python process (imports shown apart)."
    )
    for run in speed["runs"]:
        base = run["baseline"]
        lines += ["", f"### {run['chunks']:,} chunks x {run['dimension']} dims", ""]
        lines.append(
            f"Baseline (numpy exact, float32 matrix {base['matrix_mib']:.0f} MiB): vector p50 "
            f"{ms(base['vector_ms']['p50'])} / p95 {ms(base['vector_ms']['p95'])} / p99 "
            f"{ms(base['vector_ms']['p99'])} ms; file-write floor "
            f"{base['ingest_chunks_per_s']:,.0f} chunks/s."
        )
        lines.append("")
        rows = []
        for r in run["stores"]:
            if "error" in r or "skipped" in r:
                why = f"failed: {r['error']}" if "error" in r else f"skipped: {r['skipped']}"
                rows.append([r["store"], why] + ["—"] * 8)
                continue
            ratios = r.get("ratios", {})
            rows.append(
                [
                    r["store"],
                    _ingest(r, ratios),
                    _lat(r.get("vector_ms"), ratios.get("vector_p50_x_numpy")),
                    _lat(r.get("keyword_ms"), ratios.get("keyword_p50_x_numpy")),
                    _lat(r.get("hybrid_ms"), ratios.get("hybrid_p50_x_numpy")),
                    r.get("ann_recall_at_10"),
                    mib(r.get("disk_bytes")),
                    fmt(r.get("peak_rss_mib"), 0),
                    ms(r.get("reopen_ms")),
                    _cold(r.get("cold_open")),
                ]
            )
        lines.append(
            table(
                [
                    "store",
                    "ingest chunks/s (share of floor)",
                    "vector p50/p95/p99 ms (x numpy)",
                    "keyword p50/p95/p99 ms (x numpy)",
                    "hybrid p50/p95/p99 ms (x numpy)",
                    "ANN recall@10",
                    "disk MiB",
                    "peak RSS MiB",
                    "reopen ms",
                    "cold open ms (imports)",
                ],
                rows,
            )
        )
        lines += _cliffs(run)
        lines += _server(run)
    lines += _hnsw_recall(speed.get("hnsw_recall") or {})
    for key in ("latency", "ingest"):
        if key in images:
            lines += ["", f"![{key}]({images[key]})"]
    return lines


def _cliffs(run: dict[str, Any]) -> list[str]:
    """First query after the bulk ingest, and vector latency after many changed vectors."""
    rows = []
    for r in run["stores"]:
        first, changes = r.get("first_query"), r.get("after_changes")
        if not first and not changes:
            continue
        ratios = r.get("ratios", {})
        rows.append(
            [
                r["store"],
                fmt(r.get("ingest_seconds"), 1),
                _first(first, "same_store_ms", ratios.get("first_query_same_store_x_p50")),
                _first(first, "reopened_ms", ratios.get("first_query_reopened_x_p50")),
                _paired_ratio(ratios, "vector"),
                _paired_ratio(ratios, "hybrid"),
                _paired_ratio(ratios, "hybrid_one_after_the_other"),
                "—" if not changes else f"{changes['changed']:,}",
                "—"
                if not changes
                else _lat(changes["vector_ms"], ratios.get("after_changes_vector_p50_x_numpy")),
            ]
        )
    if not rows:
        return []
    header = [
        "store",
        "ingest s (side file included)",
        "first query ms, same store (x p50)",
        "first query ms, reopened (x p50)",
        "vector x paired numpy",
        "hybrid x paired numpy",
        "hybrid, halves one after the other, x paired numpy",
        "vectors changed",
        "vector p50/p95/p99 ms after (x numpy)",
    ]
    return ["", table(header, rows)]


def _server(run: dict[str, Any]) -> list[str]:
    """A server store's raw COPY floor and searches per second with concurrent clients."""
    rows = []
    for r in run["stores"]:
        server = r.get("server")
        if not server:
            continue
        if "error" in server:
            rows.append([r["store"], f"failed: {server['error']}"] + ["—"] * 5)
            continue
        ratios = r.get("ratios", {})
        floor = server["copy_floor"]
        share = ratios.get("ingest_share_of_copy_floor")
        rows.append(
            [
                r["store"],
                f"PostgreSQL {server.get('postgresql')}, pgvector {server.get('pgvector')}; "
                + ("HNSW" if server.get("hnsw_index") else "exact scan")
                + f" (threshold {server.get('hnsw_threshold'):,})",
                f"{floor['rows_per_s']:,.0f}",
                "—" if share is None else f"{r['ingest_chunks_per_s']:,.0f} ({share:.3f})",
                _per_s(server["concurrent"].get("vector", []), ratios, "vector"),
                _per_s(server["concurrent"].get("hybrid", []), ratios, "hybrid"),
                mib(server.get("table_bytes")),
            ]
        )
    if not rows:
        return []
    header = [
        "store",
        "server; vector search",
        "raw COPY floor rows/s",
        "ingest chunks/s (share of COPY floor)",
        "vector searches/s: 1 client / 4 clients (x)",
        "hybrid searches/s: 1 client / 4 clients (x)",
        "tables + indexes MiB",
    ]
    note = (
        "Server store: raw COPY floor = the same rows written with psycopg's binary `COPY ... "
        "FROM STDIN` into a plain table with a `vector` column, no index, one transaction, on "
        "the same server in the same run. Searches/s = every query once per client after its "
        "warm-up, clients are threads with a store (a connection) each, over the wall time; "
        "client and server share the machine's cores."
    )
    return ["", note, "", table(header, rows)]


def _per_s(runs: list[dict[str, Any]], ratios: dict[str, float], mode: str) -> str:
    if not runs:
        return "—"
    text = " / ".join(f"{run['per_s']:,.0f}" for run in runs)
    ratio = ratios.get(f"{mode}_per_s_{runs[-1]['clients']}_clients_x_1")
    return text if ratio is None else f"{text} ({ratio:.2f}x)"


def _hnsw_recall(stores: dict[str, Any]) -> list[str]:
    """HNSW recall@10 against numpy exact, at a size past the store's threshold."""
    lines: list[str] = []
    for name, info in stores.items():
        if "error" in info:
            lines += ["", f"HNSW recall ({name}): failed: {info['error']}"]
            continue
        index = "HNSW index searched" if info.get("hnsw_index") else "no HNSW index was built"
        ratio = info.get("vector_p50_x_numpy")
        lines += [
            "",
            f"HNSW recall ({name}): recall@10 **{info['recall_at_10']:.3f}** against numpy "
            f"exact top-10 over {info['queries']} queries, at {info['chunks']:,} chunks x "
            f"{info['dimension']} dims (threshold {info['hnsw_threshold']:,}; {index}; "
            f"ef_search {info['ef_search']}, m {info['hnsw_m']}, ef_construction "
            f"{info['hnsw_ef_construction']}); vector p50 {ms(info['vector_ms']['p50'])} ms"
            + ("" if ratio is None else f" ({ratio:.1f}x numpy's {ms(info['numpy_ms']['p50'])} ms)")
            + f"; ingest {info['ingest_seconds']:.1f} s, index build included.",
        ]
    return lines


def _paired_ratio(ratios: dict[str, float], mode: str) -> str:
    value = ratios.get(f"{mode}_p50_x_paired_numpy")
    return "—" if value is None else f"{value:.2f}x"


def _first(first: dict[str, Any] | None, key: str, ratio: float | None) -> str:
    value = None if not first else first.get(key)
    if value is None:
        return "—"
    return f"{ms(value)} ({ratio:.1f}x)" if ratio is not None else ms(value)


def _ingest(row: dict[str, Any], ratios: dict[str, float]) -> str:
    cps = row.get("ingest_chunks_per_s")
    if not cps:
        return "—"
    share = ratios.get("ingest_share_of_file_floor")
    text = f"{cps:,.0f} ({share:.4f})" if share is not None else f"{cps:,.0f}"
    optimize_s = row.get("optimize_seconds")
    return text if optimize_s is None else f"{text}; optimize {optimize_s:.1f} s"


def _lat(summary: dict[str, float] | None, ratio: float | None) -> str:
    if not summary:
        return "—"
    text = f"{ms(summary['p50'])} / {ms(summary['p95'])} / {ms(summary['p99'])}"
    return f"{text} ({ratio:.1f}x)" if ratio is not None else text


def _cold(info: dict[str, Any] | None) -> str:
    if not info:
        return "—"
    if "error" in info:
        return f"failed: {info['error']}"
    return f"{ms(info['open_and_first_query_ms'])} ({info['import_ms'] / 1000:.1f} s)"


def render_markdown(results: dict[str, Any], images: dict[str, str]) -> str:
    lines = _header(results)
    lines += _quality(results, images)
    lines += _speed(results, images)
    if results.get("startup"):
        lines += startup.render(results["startup"])
    lines += render_pipeline(results, images)
    lines += render_memory(results)
    lines += _peers(results)
    return "\n".join(lines) + "\n"
