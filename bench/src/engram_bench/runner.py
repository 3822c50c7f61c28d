"""One benchmark run: pick the parts, run the sections, write JSON, Markdown and plots.

Sections fail soft: a store or peer that breaks is recorded in the results with its error and the
run goes on, so one broken backend never hides the others' numbers. Bad input (an unknown store,
a missing dataset) is a ``ConfigError`` before anything runs.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.embedding.cache import CachedEmbedder
from engram.errors import ConfigError, EngramError
from engram.plugins import build_registry, get_plugin_manager
from engram.registry import Registry
from engram_bench import machine, plots
from engram_bench.anchors import ANCHORS
from engram_bench.config import BenchConfig, command_for
from engram_bench.dataset_types import Dataset
from engram_bench.datasets import load_dataset
from engram_bench.embedding import build_embedder, cached
from engram_bench.memory import run_memory
from engram_bench.peers import run_peers
from engram_bench.pipeline import run_pipeline
from engram_bench.quality import Embedded, embed_dataset, run_dataset
from engram_bench.report import render_markdown, write_json
from engram_bench.servers import servers_for
from engram_bench.speed import run_speed
from engram_bench.startup import run_startup
from engram_bench.stores import select_stores

Log = Callable[[str], None]
SCHEMA = 1


@dataclass
class Outcome:
    results: dict[str, Any]
    files: list[Path] = field(default_factory=list)


def _stderr_log(started: float) -> Log:
    def log(message: str) -> None:
        print(f"[{time.perf_counter() - started:7.1f}s] {message}", file=sys.stderr, flush=True)

    return log


def _embedders(
    registry: Registry, config: BenchConfig, notes: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """The requested embedders that can be built; a missing one is a note, not a failure."""
    usable = []
    for name in config.embedders:
        options = config.embedder_options.get(name, {})
        try:
            build_embedder(registry, name, options)
        except EngramError as exc:
            notes.append(f"embedder {name} left out: {exc}")
            continue
        usable.append((name, options))
    if not usable and ({"quality", "pipeline"} & set(config.sections)):
        raise ConfigError(
            f"none of the embedders {', '.join(config.embedders)} can be built ({'; '.join(notes)})"
            "; install one (from the engram checkout: pip install -e ./embedders/local) or pass "
            "--embedders hash"
        )
    return usable


def run(config: BenchConfig, *, command: str | None = None, log: Log | None = None) -> Outcome:
    """Run every section ``config`` asks for and write the report files to ``config.out``."""
    started = time.perf_counter()
    log = log or _stderr_log(started)
    registry = build_registry(get_plugin_manager())
    specs, skipped = select_stores(registry, config.stores, config.store_options)
    if not specs:
        raise ConfigError(
            "no store can be benchmarked; install one (from the engram checkout: pip install -e "
            "./backends/sqlite) or check "
            "--stores and --store-option"
        )
    notes: list[str] = []
    embedders = _embedders(registry, config, notes)
    datasets: list[Dataset] = []
    if {"quality", "peers"} & set(config.sections):
        datasets = [
            load_dataset(spec, config.data, max_queries=config.max_queries)
            for spec in config.datasets
        ]
    info = machine.machine_info()
    results: dict[str, Any] = {
        "schema": SCHEMA,
        "date": machine.today(),
        "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "command": command or command_for(config),
        "revision": machine.source_revision(),
        "machine": info,
        "machine_slug": machine.machine_slug(info),
        "versions": machine.versions(registry),
        "config": config.model_dump(mode="json"),
        "stores": {s.name: s.version for s in specs},
        "skipped_stores": skipped,
        "anchors": {d.name: ANCHORS[d.name] for d in datasets if d.name in ANCHORS},
        "notes": notes,
    }
    log(
        f"bench: stores {', '.join(s.name for s in specs)}; embedders "
        f"{', '.join(n for n, _ in embedders) or 'none'}; sections {', '.join(config.sections)}"
    )
    workdir = Path(tempfile.mkdtemp(prefix="engram-bench-"))
    try:
        with servers_for(specs, log) as servers:
            results["servers"] = servers
            if "quality" in config.sections or "peers" in config.sections:
                _quality_and_peers(
                    config, registry, specs, embedders, datasets, workdir, results, log
                )
            if "speed" in config.sections:
                results["speed"] = run_speed(
                    specs,
                    config.scales,
                    workdir=workdir,
                    dim=config.dimension,
                    query_count=config.speed_queries,
                    batch=config.batch_size,
                    cold_open=config.cold_open,
                    log=log,
                )
                if config.cold_open:  # new processes, as the store cold opens above
                    results["startup"] = run_startup(workdir, repeats=9, log=log)
            if "memory" in config.sections:
                results["memory"] = run_memory(config, registry, workdir, log, notes)
            if "pipeline" in config.sections:
                results["pipeline"] = run_pipeline(
                    registry,
                    specs,
                    embedders,
                    files=config.vault_files,
                    throughput_texts=config.throughput_texts,
                    workdir=workdir,
                    log=log,
                )
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    results["machine"]["load_average_end"] = machine.load_average()
    results["duration_s"] = time.perf_counter() - started
    results["cpu_s"] = _cpu_seconds()
    outcome = Outcome(results)
    outcome.files = write_outputs(results, config, log)
    return outcome


def _cpu_seconds() -> float:
    """CPU time of this process and its finished children (cold-open processes, peers): on a
    busy machine it shows what the run costs apart from the time spent waiting for a core."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def _quality_and_peers(
    config: BenchConfig,
    registry: Registry,
    specs: list[Any],
    embedders: list[tuple[str, dict[str, Any]]],
    datasets: list[Dataset],
    workdir: Path,
    results: dict[str, Any],
    log: Log,
) -> None:
    cache_file = config.cache / "embeddings.sqlite"
    wrapped: list[CachedEmbedder] = [
        cached(build_embedder(registry, name, options), cache_file) for name, options in embedders
    ]
    first: dict[str, Embedded] = {}
    quality: list[dict[str, Any]] = []
    try:
        for dataset in datasets:
            log(
                f"quality: {dataset.name}: {dataset.doc_count:,} docs, {dataset.query_count:,} "
                "queries"
            )
            embedded = [embed_dataset(dataset, e, log) for e in wrapped]
            if embedded:
                first[dataset.name] = embedded[0]
            if "quality" in config.sections:
                quality.append(
                    run_dataset(
                        dataset,
                        embedded,
                        specs,
                        workdir=workdir,
                        latency_queries=config.quality_latency_queries,
                        log=log,
                        candidates=config.candidates,
                        floor_on_every_store=config.floor_on_every_store,
                    )
                )
    finally:
        for e in wrapped:
            if e.cache is not None:
                e.cache.close()
    if "quality" in config.sections:
        results["quality"] = {"datasets": quality}
    if "peers" in config.sections:
        results["peers"] = run_peers(
            config.peers, config.peer_python, datasets, first, workdir=workdir, log=log
        )


def write_outputs(results: dict[str, Any], config: BenchConfig, log: Log) -> list[Path]:
    """``<date>-<machine>.json`` / ``.md`` / ``-<plot>.png`` in ``config.out``."""
    out = config.out
    out.mkdir(parents=True, exist_ok=True)
    stem = f"{results['date']}-{results['machine_slug']}"
    files: list[Path] = []
    images: dict[str, str] = {}
    if config.plots and plots.available():
        images = plots.write_plots(results, out, stem)
        files += [out / name for name in images.values()]
    elif config.plots:
        results["notes"].append(
            "plots left out: matplotlib is not installed (pip install matplotlib; engram-bench "
            "depends on it)"
        )
    files.insert(0, write_json(results, out / f"{stem}.json"))
    markdown = out / f"{stem}.md"
    markdown.write_text(render_markdown(results, images), encoding="utf-8")
    files.insert(1, markdown)
    log(f"bench: wrote {', '.join(str(f) for f in files)}")
    return files
