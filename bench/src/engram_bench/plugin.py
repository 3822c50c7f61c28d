"""engram-bench's plugin: ``engram bench`` through core's ``register_commands`` hook."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.hookspecs import hookimpl

if TYPE_CHECKING:  # one annotation: every command loads this plugin, few need typer
    import typer


@hookimpl
def register_commands(app: typer.Typer) -> None:
    from engram_bench.cli import bench_command

    app.command("bench")(bench_command)
