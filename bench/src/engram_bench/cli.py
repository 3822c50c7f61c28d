"""``engram bench``: quality, speed, scale and pipeline cost of every installed part, in one run.

The report (JSON, Markdown, PNG plots) goes to ``--out``; see docs/benchmarks.md.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from engram.cli.common import console
from engram.config import parse_overrides
from engram.errors import ConfigError
from engram_bench.config import (
    ONE_MILLION,
    SECTIONS,
    BenchConfig,
    command_for,
    default_config,
    parse_scale,
    quick_config,
    split_list,
)


def bench_command(
    quick: Annotated[
        bool, typer.Option("--quick", help="The smoke configuration: small, hash embedder.")
    ] = False,
    stores: Annotated[
        str | None, typer.Option(help="Stores to run, comma-separated (default: all installed).")
    ] = None,
    embedders: Annotated[
        str | None, typer.Option(help="Embedders, comma-separated (default: local,hash).")
    ] = None,
    datasets: Annotated[
        str | None,
        typer.Option(help="Datasets: names under --data, or NAME=PATH (default: scifact,locomo)."),
    ] = None,
    scale: Annotated[
        str | None, typer.Option(help="Synthetic corpus sizes, e.g. 10k,100k (default).")
    ] = None,
    with_1m: Annotated[
        bool, typer.Option("--with-1m", help="Add the 1,000,000-chunk scale (slow).")
    ] = False,
    data: Annotated[
        Path | None, typer.Option(help="Folder holding the datasets (default: ../shared/data).")
    ] = None,
    out: Annotated[
        Path | None, typer.Option(help="Where the report goes (default: bench/results).")
    ] = None,
    cache: Annotated[
        Path | None,
        typer.Option(help="Embedding cache folder (default: ~/.cache/engram/bench)."),
    ] = None,
    sections: Annotated[
        str | None,
        typer.Option(help=f"Sections to run (default: all of {', '.join(SECTIONS)})."),
    ] = None,
    peers: Annotated[
        str | None, typer.Option(help="Peers to compare with: txtai, or none.")
    ] = None,
    peer_python: Annotated[
        Path | None, typer.Option(help="Python that has the peers installed (default: this one).")
    ] = None,
    store_option: Annotated[
        list[str] | None,
        typer.Option("--store-option", help="A store's option: NAME.KEY=VALUE (repeatable)."),
    ] = None,
    max_queries: Annotated[
        int | None, typer.Option(min=1, help="At most this many queries per dataset.")
    ] = None,
    candidates: Annotated[
        int | None,
        typer.Option(min=1, max=1000, help="Hybrid candidates per side, at least (default: 40)."),
    ] = None,
    vault_files: Annotated[
        int | None, typer.Option(min=1, help="Files in the generated vault (default: 1000).")
    ] = None,
    floor_on_every_store: Annotated[
        bool,
        typer.Option(
            "--floor-on-every-store/--floor-on-first-store",
            help="Run the other embedders (the hash floor) on every store, or only on the first.",
        ),
    ] = True,
    cold_open: Annotated[
        bool | None,
        typer.Option("--cold-open/--no-cold-open", help="Time opening a store in a new process."),
    ] = None,
    plots: Annotated[bool, typer.Option("--plots/--no-plots", help="Write PNG plots.")] = True,
    nli_per_label: Annotated[
        int | None,
        typer.Option(min=1, help="Memory section: at most this many NLI pairs per label."),
    ] = None,
) -> None:
    """Benchmark every installed store and embedder: quality, speed, scale, pipeline, peers."""
    changes: dict[str, Any] = {"plots": plots}
    if not floor_on_every_store:
        changes["floor_on_every_store"] = False
    lists = {"stores": stores, "embedders": embedders, "datasets": datasets, "sections": sections}
    changes.update({k: split_list(v) for k, v in lists.items() if v is not None})
    if peers is not None:
        changes["peers"] = [p for p in split_list(peers) or [] if p != "none"]
    given = {
        "data": data,
        "out": out,
        "cache": cache,
        "peer_python": peer_python,
        "max_queries": max_queries,
        "candidates": candidates,
        "vault_files": vault_files,
        "cold_open": cold_open,
        "nli_per_label": nli_per_label,
    }
    changes.update({k: v for k, v in given.items() if v is not None})
    if store_option:
        changes["store_options"] = _store_options(store_option)
    config = _config(quick, changes)
    if scale is not None:
        config.scales = [parse_scale(s) for s in split_list(scale) or []]
    if with_1m and ONE_MILLION not in config.scales:
        config.scales.append(ONE_MILLION)
    from engram_bench.runner import run

    outcome = run(config, command=command_for(config))
    for path in outcome.files:
        console.print(str(path), highlight=False, soft_wrap=True)


def _config(quick: bool, changes: dict[str, Any]) -> BenchConfig:
    from pydantic import ValidationError

    try:
        return quick_config(**changes) if quick else default_config(**changes)
    except ValidationError as exc:
        problems = "; ".join(
            f"--{'-'.join(str(p) for p in err['loc']).replace('_', '-')}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        raise ConfigError(f"invalid bench options: {problems}") from None


def _store_options(pairs: list[str]) -> dict[str, dict[str, Any]]:
    parsed = parse_overrides(pairs)
    out: dict[str, dict[str, Any]] = {}
    for name, value in parsed.items():
        if not isinstance(value, dict):
            raise ConfigError(
                f"--store-option expects NAME.KEY=VALUE (e.g. chroma.mode=embedded), got "
                f"{name}={value!r}"
            )
        out[name] = value
    return out
