"""``engram index`` and ``engram rebuild``: markdown in, chunks and vectors out."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from engram.cli.common import console, open_memory, print_labelled
from engram.cli.progress import track
from engram.ingest.report import IndexReport


def register(app: typer.Typer) -> None:
    app.command("index")(index_command)
    app.command("rebuild")(rebuild_command)


def index_command(
    ctx: typer.Context,
    paths: Annotated[
        list[Path] | None, typer.Argument(help="Folders or files (default: vault.paths).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Report what would change; write nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Index new and changed markdown files; drop removed ones; skip unchanged ones."""
    with open_memory(ctx) as memory, track(memory.store.count) as tracker:
        report = memory.index(paths or None, dry_run=dry_run, progress=tracker)
    _print_report(report, as_json)


def rebuild_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Recreate the store from the markdown files alone."""
    with open_memory(ctx) as memory, track(memory.store.count) as tracker:
        report = memory.rebuild(progress=tracker)
    _print_report(report, as_json)


def _print_report(report: IndexReport, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report.model_dump()))
        return
    for skipped in report.skipped:
        print_labelled("skipped", f"{skipped.path}: {skipped.reason}")
    for warning in report.warnings:
        print_labelled("warning:", warning)
    console.print(report.summary(), highlight=False)
