"""The whole pipeline as a user runs it (``engram index``, through ``Memory``) on a generated
vault: a first run, a no-op re-run, and a run after 1% of the files changed; plus each
embedder's own throughput.

The no-op re-run is also measured against its floor in the same run: ``os.walk`` of the vault
plus one ``os.stat`` per file, which is all a no-op must do (target: at most 1.5 times that), and a
one-file edit against that floor plus the time to embed the edited file's chunks; the
measurement is ``engram_bench.reindex``'s, which also runs alone at 1K and 10K files.

All stores share one embedding cache created for this run: the first store's first run embeds
every chunk (cold cache), later stores find them cached, which is what switching backends costs
a user. The "embedded" column shows which is which. Changed files get a line naming the store, so
every store's 1%-changed run really embeds its changed chunks.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.config import EngramConfig
from engram.ingest.sync import IndexReport
from engram.memory import Memory
from engram.registry import Registry
from engram_bench import reindex, vault
from engram_bench.embedding import build_embedder, throughput
from engram_bench.stores import StoreSpec, fresh_folder, release

Log = Callable[[str], None]
CHANGED_SHARE = 0.01


def _row(
    label: str, report: IndexReport, seconds: float, files: int, embedded: int
) -> dict[str, Any]:
    return {
        "run": label,
        "seconds": seconds,
        "files_per_s": files / seconds if seconds > 0 else None,
        "new": report.new,
        "changed": report.changed,
        "unchanged": report.unchanged,
        "chunks_written": report.chunks_written,
        "texts_embedded": embedded,  # reached the model: the cache did not have them
        "texts_sent": report.texts_embedded,  # asked of the (cached) embedder
        "warnings": report.warnings[:3],
    }


def _timed_index(memory: Memory, root: Path, label: str, files: int) -> dict[str, Any]:
    before = memory.embedder.texts_embedded
    began = time.perf_counter()
    report = memory.index([root])
    seconds = time.perf_counter() - began
    return _row(label, report, seconds, files, memory.embedder.texts_embedded - before)


def noop_against_floor(
    memory: Memory, root: Path, paths: list[Path], files: int
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The no-op re-index and a one-file edit against the walk + stat floor (measured by
    ``engram_bench.reindex``, the same run's floor paired with each call)."""
    noop = reindex.noop(memory, root)
    edit = reindex.one_file_edit(memory, root, paths, edits=1)
    floor = {
        "files": files,
        "floor_seconds": noop["floor_wall_s"],
        "noop_seconds": noop["call_wall_s"],
        "noop_ratio": noop["ratio_wall"],
        "noop_unchanged": noop["unchanged"],
        "target_ratio": reindex.TARGET,
        "edit_seconds": edit["call_wall_s"],
        "edit_changed": 1,
        "edit_embedding_seconds": edit["embedding_s"],
        "edit_budget_seconds": edit["budget_s"],
    }
    report = IndexReport(unchanged=noop["unchanged"])
    return floor, _row("no-op", report, noop["call_wall_s"], files, 0)


def run_store_pipeline(
    spec: StoreSpec,
    embedder: str,
    embedder_options: dict[str, Any],
    files: int,
    folder: Path,
    cache_file: Path,
) -> dict[str, Any]:
    fresh_folder(folder)
    root = folder / "vault"
    paths = vault.write_vault(root, files)
    vault.age(paths, 3600)
    config = EngramConfig(
        root=root,
        store={"backend": spec.name, **spec.options_for(folder)},
        embedder={"provider": embedder, **embedder_options},
        cache={"enabled": True, "path": cache_file},
        vault={"paths": [root], "respect_gitignore": False},
    )
    runs = []
    with Memory.open(config) as memory:
        runs.append(_timed_index(memory, root, "first", files))
        floor, noop = noop_against_floor(memory, root, paths, files)
        runs.append(noop)
        changed = vault.change(paths, CHANGED_SHARE, spec.name)
        runs.append(_timed_index(memory, root, f"{len(changed)} changed", len(changed)))
    return {"store": spec.name, "runs": runs, "noop_floor": floor}


def run_pipeline(
    registry: Registry,
    specs: list[StoreSpec],
    embedders: list[tuple[str, dict[str, Any]]],
    *,
    files: int,
    throughput_texts: int,
    workdir: Path,
    log: Log,
) -> dict[str, Any]:
    """Index the generated vault on every store with the first embedder; time every embedder."""
    speeds: dict[str, Any] = {}
    texts = vault.sample_texts(throughput_texts)
    for name, options in embedders:
        log(f"pipeline: {name} embedder throughput on {len(texts)} notes")
        try:
            speeds[name] = throughput(build_embedder(registry, name, options), texts)
        except Exception as exc:
            speeds[name] = {"error": f"{type(exc).__name__}: {exc}"}
    embedder, options = embedders[0]
    cache_file = fresh_folder(workdir / "pipeline-cache") / "embeddings.sqlite"
    stores: list[dict[str, Any]] = []
    for number, spec in enumerate(specs):
        log(f"pipeline: engram index of {files} files on {spec.name} ({embedder})")
        folder = workdir / f"pipeline-{spec.name}"
        try:
            row = run_store_pipeline(spec, embedder, options, files, folder, cache_file)
            row["cache"] = "cold" if number == 0 else "warm"
            stores.append(row)
        except Exception as exc:
            stores.append({"store": spec.name, "error": f"{type(exc).__name__}: {exc}"})
            log(f"pipeline: {spec.name} failed: {type(exc).__name__}: {exc}")
        finally:
            release(spec, folder)
    return {
        "files": files,
        "embedder": embedder,
        "changed_share": CHANGED_SHARE,
        "embedder_throughput": speeds,
        "stores": stores,
    }
