"""engram-bench's plugin: ``engram bench`` through core's ``register_commands`` hook."""

from __future__ import annotations

import typer

from engram.hookspecs import hookimpl


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from engram_bench.cli import bench_command

    app.command("bench")(bench_command)
