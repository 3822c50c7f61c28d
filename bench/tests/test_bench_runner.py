"""A whole quick run with the built-in memory store: every section, every output file."""

from __future__ import annotations

import json
from pathlib import Path

from engram_bench import plots
from engram_bench.config import quick_config
from engram_bench.runner import run
from engram_bench.samples import write_samples


def test_a_quick_run_writes_json_markdown_and_plots(tmp_path: Path) -> None:
    config = quick_config(
        stores=["memory"],
        data=write_samples(tmp_path / "data"),
        out=tmp_path / "out",
        cache=tmp_path / "cache",
        scales=[500],
        vault_files=5,
        peers=["txtai", "nosuchpeer"],
        peer_python=Path("/nonexistent/python"),
    )
    messages: list[str] = []
    outcome = run(config, log=messages.append)
    names = sorted(p.name for p in outcome.files)
    stem = outcome.results["date"] + "-" + outcome.results["machine_slug"]
    assert f"{stem}.json" in names and f"{stem}.md" in names
    pngs = {f"{stem}-{p}.png" for p in ("scifact", "locomo", "latency", "pipeline")}
    if plots.available():
        assert pngs <= set(names)
    else:  # matplotlib missing (engram-bench depends on it): the report says how to get plots
        assert not pngs & set(names)
        assert any("pip install matplotlib" in n for n in outcome.results["notes"])
    assert all(p.stat().st_size > 0 for p in outcome.files)

    results = json.loads((tmp_path / "out" / f"{stem}.json").read_text())
    assert {"machine", "versions", "config", "quality", "peers", "speed", "pipeline"} <= set(
        results
    )
    assert results["command"].startswith("engram bench --quick --stores memory")
    quality = {d["dataset"]: d for d in results["quality"]["datasets"]}
    assert set(quality) == {"scifact", "locomo"}
    assert results["anchors"]["scifact"][0]["ndcg@10"] == 0.665
    assert results["speed"]["runs"][0]["stores"][0]["store"] == "memory"
    (store,) = results["pipeline"]["stores"]
    assert [r["run"] for r in store["runs"]] == ["first", "no-op", "1 changed"]
    assert store["runs"][1]["unchanged"] == 5 and store["runs"][1]["texts_embedded"] == 0
    assert store["runs"][2]["changed"] == 1 and store["runs"][2]["texts_embedded"] >= 1
    peers = results["peers"]["peers"]
    assert peers["txtai"]["status"] == "not installed"
    assert peers["nosuchpeer"]["status"].startswith("unknown peer")

    markdown = (tmp_path / "out" / f"{stem}.md").read_text()
    for heading in ("## 1. Retrieval quality", "## 2. Speed and scale", "## 3. The pipeline"):
        assert heading in markdown
    assert "Published anchors" in markdown
    assert "Hybrid minus the better single mode" in markdown
    paired = quality["scifact"]["paired"]
    assert {p["mode"] for p in paired} == {
        "hybrid-default",
        "hybrid-weighted",
        "hybrid-rrf",
        "hybrid-standout",
    }
    assert all(p["verdict"] in {"worse", "tie", "better"} for p in paired)
    assert all(p["held_out"]["verdict"] in {"worse", "tie", "better"} for p in paired)
    assert all(p["recall"]["ok"] in {True, False} for p in paired)
    assert "held-out: versus" in markdown and "recall@100 (better single)" in markdown
    assert (f"]({stem}-latency.png)" in markdown) == plots.available()
    assert any(m.startswith("bench: wrote") for m in messages)
