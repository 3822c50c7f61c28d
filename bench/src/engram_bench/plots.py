"""PNG plots of a run (matplotlib, a dependency of engram-bench). Without matplotlib the
report is written without plots and says how to get them."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from engram_bench.anchors import ANCHORS

MODE_STYLE = {"vector": "-", "keyword": "--", "hybrid": ":"}


def available() -> bool:
    return importlib.util.find_spec("matplotlib") is not None


def write_plots(results: dict[str, Any], folder: Path, stem: str) -> dict[str, str]:
    """Plot what the results hold; returns {plot name: file name} for the report."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out: dict[str, str] = {}
    subtitle = f"{results['date']} · {results['machine_slug']}"

    def save(fig: Any, name: str) -> None:
        file = f"{stem}-{name}.png"
        fig.tight_layout()
        fig.savefig(folder / file, dpi=110)
        plt.close(fig)
        out[name] = file

    for ds in (results.get("quality") or {}).get("datasets", []):
        fig = _quality_plot(plt, ds, results, subtitle)
        if fig is not None:
            save(fig, ds["dataset"])
        fig = _category_plot(plt, ds, subtitle)
        if fig is not None:
            save(fig, f"{ds['dataset']}-categories")
    speed = results.get("speed")
    if speed and speed["runs"]:
        save(_latency_plot(plt, speed, subtitle), "latency")
        save(_ingest_plot(plt, speed, subtitle), "ingest")
    pipe = results.get("pipeline")
    if pipe and any("runs" in s for s in pipe["stores"]):
        save(_pipeline_plot(plt, pipe, subtitle), "pipeline")
    return out


def _main_metric(ds: dict[str, Any]) -> str:
    return "ndcg@10" if "ndcg@10" in ds["metrics"] else str(ds["metrics"][0])


def _quality_plot(plt: Any, ds: dict[str, Any], results: dict[str, Any], subtitle: str) -> Any:
    metric = _main_metric(ds)
    rows = list(ds["rows"])
    for info in (results.get("peers") or {}).get("peers", {}).values():
        rows += [
            {**r, "store": "txtai"} for r in info.get("rows", []) if r["dataset"] == ds["dataset"]
        ]
    if not rows:
        return None
    labels = [f"{r['store']}\n{r['embedder'] or ''}".strip() for r in rows]
    keys = list(dict.fromkeys(labels))
    modes = list(dict.fromkeys(r["mode"] for r in rows))
    fig, ax = plt.subplots(figsize=(max(6, 1.1 * len(keys) + 2), 4.5))
    width = 0.8 / len(modes)
    for m_index, mode in enumerate(modes):
        xs, ys = [], []
        for label, r in zip(labels, rows, strict=True):
            if r["mode"] == mode:
                xs.append(keys.index(label) + m_index * width - 0.4 + width / 2)
                ys.append(r["metrics"][metric])
        ax.bar(xs, ys, width, label=mode)
    styles = iter(["--", ":", "-.", (0, (5, 1)), (0, (1, 3))])
    for anchor in ANCHORS.get(ds["dataset"], []):
        if metric in anchor:
            ax.axhline(
                anchor[metric],
                color="dimgrey",
                linewidth=0.9,
                linestyle=next(styles, "--"),
                label=f"{anchor['system']}: {anchor[metric]}",
            )
    ax.set_xticks(range(len(keys)), keys, fontsize=7)
    ax.set_ylabel(metric)
    ax.set_title(f"{ds['dataset']}: {metric} by store, embedder and mode\n{subtitle}", fontsize=9)
    ax.legend(fontsize=6, loc="lower left", ncol=2)
    return fig


def _category_plot(plt: Any, ds: dict[str, Any], subtitle: str) -> Any:
    if not ds["category_labels"]:
        return None
    metric = "recall@10" if "recall@10" in ds["metrics"] else _main_metric(ds)
    # One store (the first that ran with an embedder): every mode, every category.
    stores = [r for r in ds["rows"] if r["store"] != "numpy-exact"]
    if not stores:
        return None
    first = stores[0]["store"]
    embedder = next((r["embedder"] for r in stores if r["embedder"]), None)
    rows = [r for r in stores if r["store"] == first and r["embedder"] in (None, embedder)]
    cats = sorted({c for r in rows for c in r["per_category"]})
    if not cats:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    width = 0.8 / len(rows)
    for i, r in enumerate(rows):
        ys = [r["per_category"].get(c, {}).get(metric, 0.0) for c in cats]
        ax.bar(
            [x + i * width - 0.4 + width / 2 for x in range(len(cats))], ys, width, label=r["mode"]
        )
    names = [f"{c} {ds['category_labels'].get(c, '')}" for c in cats]
    ax.set_xticks(range(len(cats)), names, fontsize=8)
    ax.set_ylabel(metric)
    ax.set_title(f"{ds['dataset']} per category: {first} + {embedder}\n{subtitle}", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def _latency_plot(plt: Any, speed: dict[str, Any], subtitle: str) -> Any:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    scales = [run["chunks"] for run in speed["runs"]]
    ax.plot(
        scales,
        [run["baseline"]["vector_ms"]["p50"] for run in speed["runs"]],
        "k-o",
        label="numpy exact (baseline)",
        linewidth=2,
    )
    names = list(dict.fromkeys(r["store"] for run in speed["runs"] for r in run["stores"]))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for index, name in enumerate(names):
        for mode, style in MODE_STYLE.items():
            points = [
                (run["chunks"], r[f"{mode}_ms"]["p50"])
                for run in speed["runs"]
                for r in run["stores"]
                if r["store"] == name and f"{mode}_ms" in r
            ]
            if points:
                ax.plot(
                    *zip(*points, strict=True),
                    linestyle=style,
                    marker=".",
                    color=colours[index % len(colours)],
                    label=f"{name} {mode}",
                )
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("chunks")
    ax.set_ylabel("p50 latency, ms (log)")
    ax.set_title(f"Query latency (top-{speed['k']})\n{subtitle}", fontsize=9)
    ax.legend(fontsize=6, ncol=2)
    return fig


def _ingest_plot(plt: Any, speed: dict[str, Any], subtitle: str) -> Any:
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(dict.fromkeys(r["store"] for run in speed["runs"] for r in run["stores"]))
    width = 0.8 / max(1, len(speed["runs"]))
    for i, run in enumerate(speed["runs"]):
        values = {r["store"]: r.get("ingest_chunks_per_s") or 0.0 for r in run["stores"]}
        ax.bar(
            [x + i * width - 0.4 + width / 2 for x in range(len(names))],
            [values.get(n, 0.0) for n in names],
            width,
            label=f"{run['chunks']:,} chunks",
        )
    ax.set_xticks(range(len(names)), names)
    ax.set_yscale("log")
    ax.set_ylabel("chunks/s (log)")
    ax.set_title(f"Ingest throughput (upsert, precomputed vectors)\n{subtitle}", fontsize=9)
    ax.legend(fontsize=7)
    return fig


def _pipeline_plot(plt: Any, pipe: dict[str, Any], subtitle: str) -> Any:
    stores = [s for s in pipe["stores"] if "runs" in s]
    fig, ax = plt.subplots(figsize=(7, 4))
    labels = ["first", "no-op", "1% changed"]
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        ax.bar(
            [x + i * width - 0.4 + width / 2 for x in range(len(stores))],
            [s["runs"][i]["seconds"] for s in stores],
            width,
            label=label,
        )
    ax.set_xticks(range(len(stores)), [f"{s['store']}\n({s['cache']} cache)" for s in stores])
    ax.set_ylabel("seconds")
    ax.set_title(
        f"engram index, {pipe['files']:,} files, {pipe['embedder']} embedder\n{subtitle}",
        fontsize=9,
    )
    ax.legend(fontsize=7)
    return fig
