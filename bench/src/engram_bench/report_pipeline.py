"""The report's pipeline section: ``engram index`` on a generated vault for every store, each
embedder's throughput, and the no-op re-run and one-file edit against their floor."""

from __future__ import annotations

from typing import Any

from engram_bench.report_tables import table


def render_pipeline(results: dict[str, Any], images: dict[str, str]) -> list[str]:
    pipe = results.get("pipeline")
    if not pipe:
        return []
    lines = ["", "## 3. The pipeline (`engram index`)", ""]
    lines.append(
        f"A generated vault of {pipe['files']:,} markdown files (frontmatter, headings; every "
        f"tenth file has several sections), indexed through `Memory.index` with the "
        f"`{pipe['embedder']}` embedder and a fresh embedding cache shared by the stores: the "
        "first store's first run embeds everything (cold), later stores find the vectors cached "
        "(warm), as when a user switches backends. The changed files get a line naming the store, "
        "so every 1% run embeds for real."
    )
    lines += ["", "Embedder throughput (no cache, after one warm-up call):", ""]
    rows = []
    for name, s in pipe["embedder_throughput"].items():
        if "error" in s:
            rows.append([name, f"failed: {s['error']}", "—"])
        else:
            rows.append([name, f"{s['per_second']:.1f}", f"{int(s['texts'])} notes"])
    lines.append(table(["embedder", "texts/s", "sample"], rows))
    lines.append("")
    rows = []
    for st in pipe["stores"]:
        if "error" in st:
            rows.append([st["store"], f"failed: {st['error']}", "—", "—", "—"])
            continue
        first, noop, changed = st["runs"]
        rows.append(
            [
                st["store"],
                f"{first['seconds']:.2f} s ({first['files_per_s']:.0f} files/s, "
                f"{first['chunks_written']} chunks, {first['texts_embedded']} embedded, "
                f"{st['cache']} cache)",
                f"{noop['seconds']:.2f} s",
                f"{changed['seconds']:.2f} s ({changed['run']}, {changed['texts_embedded']} "
                "embedded)",
            ]
        )
    lines.append(table(["store", "first run", "no-op re-run", "1% changed"], rows))
    lines += _noop_floor(pipe)
    if "pipeline" in images:
        lines += ["", f"![pipeline]({images['pipeline']})"]
    return lines


def _noop_floor(pipe: dict[str, Any]) -> list[str]:
    """The no-op re-index and a one-file edit against ``os.walk`` + ``stat`` of the vault."""
    rows = []
    for st in pipe["stores"]:
        f = st.get("noop_floor")
        if not f:
            continue
        ok = f["noop_ratio"] is not None and f["noop_ratio"] <= f["target_ratio"]
        rows.append(
            [
                st["store"],
                f"{f['floor_seconds'] * 1000:.1f} ms",
                f"{f['noop_seconds'] * 1000:.1f} ms ({f['noop_ratio']:.2f}x, "
                f"{'within' if ok else 'over'} {f['target_ratio']}x)",
                f"{f['edit_seconds'] * 1000:.1f} ms (budget {f['edit_budget_seconds'] * 1000:.1f}"
                f" ms: floor x {f['target_ratio']} + {f['edit_embedding_seconds'] * 1000:.1f} ms "
                "embedding)",
            ]
        )
    if not rows:
        return []
    header = ["store", "walk + stat floor", "no-op re-index", "1 file edited"]
    return [
        "",
        f"No-op re-index of {pipe['files']} files against its floor (same run):",
        "",
        table(header, rows),
    ]
