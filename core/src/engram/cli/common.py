"""What every command shares: global options, opening the memory, consoles."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from engram.config import EngramConfig, load_config, parse_overrides
from engram.memory import Memory

console = Console()
err_console = Console(stderr=True)


def global_options(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Project config file (default: nearest engram.toml)."),
    ] = None,
    store: Annotated[str | None, typer.Option(help="Store backend to use (e.g. sqlite).")] = None,
    embedder: Annotated[
        str | None, typer.Option(help="Embedder to use (e.g. local, hash).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override any setting: --set search.limit=10 (repeatable)."),
    ] = None,
) -> None:
    """Durable, searchable memory for AI agents."""
    overrides: dict[str, Any] = parse_overrides(set_ or [])
    if store:
        overrides.setdefault("store", {})["backend"] = store
    if embedder:
        overrides.setdefault("embedder", {})["provider"] = embedder
    ctx.obj = {"config_file": config, "overrides": overrides}


def get_config(ctx: typer.Context) -> EngramConfig:
    obj = ctx.find_root().obj or {}
    return load_config(obj.get("overrides"), project_file=obj.get("config_file"))


def open_memory(ctx: typer.Context) -> Memory:
    return Memory.open(get_config(ctx))
