"""``engram stats``, ``engram plugins`` and ``engram doctor``: what is installed and in effect."""

from __future__ import annotations

import json
import platform
import sys
from typing import Annotated, Any

import typer

from engram import __version__
from engram.cli.common import console, get_config, open_memory
from engram.cli.config_view import config_view
from engram.errors import EngramError
from engram.plugins import build_registry, describe_plugins, get_plugin_manager
from engram.protocols import Diagnoses
from engram.registry import Registry


def register(app: typer.Typer) -> None:
    app.command("stats")(stats_command)
    app.command("plugins")(plugins_command)
    app.command("doctor")(doctor_command)


def stats_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Documents and chunks per source, memories per type, index identity and cache (the
    numbers the memory_stats tool and the dashboard show)."""
    with open_memory(ctx) as memory:
        stats = memory.stats()
    if as_json:
        console.print_json(json.dumps(stats))
        return
    identity = stats["identity"]
    console.print(
        f"store      {stats['store']}  ({stats['documents']} documents, {stats['chunks']} chunks)"
    )
    console.print(f"sources    {stats['documents_by_source'] or '-'}")
    console.print(f"memories   {stats['memories']} live {stats['memories_by_type'] or ''}")
    console.print(f"identity   {identity or 'none yet (nothing indexed)'}")
    console.print(f"cache      {stats['cache']}")
    for name, part in (stats.get("origins") or {}).items():
        mine = "  (this vault)" if part["this_vault"] else ""
        console.print(
            f"origin     {name} [{part['id']}]: {part['documents']} documents, "
            f"{part['chunks']} chunks{mine}",
            markup=False,
            highlight=False,
        )


def plugins_command() -> None:
    """Every registered store, embedder, extractor and searcher, as JSON."""
    rows = describe_plugins(build_registry(get_plugin_manager()))
    typer.echo(
        json.dumps(
            [{k: r[k] for k in ("name", "kind", "distribution", "version")} for r in rows], indent=2
        )
    )


def doctor_command(ctx: typer.Context) -> None:
    """What is installed, the config in effect, SQLite extension loading, the store's identity."""
    report: dict[str, Any] = {
        "engram": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
    }
    registry: Registry | None = None
    try:
        registry = build_registry(get_plugin_manager())
        report["plugins"] = {
            kind: registry.names(kind) for kind in ("store", "embedder", "extractor", "searcher")
        }
    except EngramError as exc:
        report["plugins"] = f"error: {exc}"
    try:
        config = get_config(ctx)
        report["config"] = config_view(config, registry)
    except EngramError as exc:
        report["config"] = f"error: {exc}"
    try:
        with open_memory(ctx) as memory:
            report["store"] = memory.stats()
            # Stores may explain their own setup (SQLite: driver, extension loading, FTS5).
            if isinstance(memory.store, Diagnoses):
                report["store"]["diagnostics"] = memory.store.diagnostics()
    except EngramError as exc:
        report["store"] = f"error: {exc}"
    console.print_json(json.dumps(report, default=str))
