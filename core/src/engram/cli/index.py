"""``engram index`` and ``engram rebuild``: markdown in, chunks and vectors out."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engram.cli.common import console, err_console, open_memory, print_labelled
from engram.ingest.report import IndexReport

PROGRESS_MIN_FILES = 50


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
    with open_memory(ctx) as memory, _progress(not as_json) as progress:
        report = memory.index(paths or None, dry_run=dry_run, progress=progress)
    _print_report(report, as_json)


def rebuild_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Recreate the store from the markdown files alone."""
    with open_memory(ctx) as memory, _progress(not as_json) as progress:
        report = memory.rebuild(progress=progress)
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


@contextmanager
def _progress(enabled: bool) -> Iterator[Callable[[int, int, str], None] | None]:
    """A rich progress bar on long runs in a terminal; silent otherwise."""
    if not enabled or not err_console.is_terminal:
        yield None
        return
    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err_console,
        transient=True,
    )
    task = bar.add_task("", total=None)
    started = False

    def update(done: int, total: int, path: str) -> None:
        nonlocal started
        if total < PROGRESS_MIN_FILES:
            return
        if not started:
            bar.start()
            started = True
        bar.update(task, completed=done, total=total, description=path[-40:])

    try:
        yield update
    finally:
        if started:
            bar.stop()
