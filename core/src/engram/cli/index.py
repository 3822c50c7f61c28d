"""``engram index`` and ``engram rebuild``: markdown in, chunks and vectors out. Ctrl+C stops
either with exit code 130 and what was done so far; the next run picks up where it stopped."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated

import typer

from engram.cli.common import console, err_console, open_memory, print_labelled
from engram.cli.progress import Tracker, track
from engram.ingest.report import IndexInterrupted, IndexReport

INTERRUPTED = "interrupted; nothing lost, re-run to continue"


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
    with (
        open_memory(ctx) as memory,
        track(memory.store.count) as tracker,
        _stop_on_interrupt(tracker, as_json),
    ):
        report = memory.index(paths or None, dry_run=dry_run, progress=tracker)
    _print_report(report, as_json)


def rebuild_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Recreate the store from the markdown files alone."""
    with (
        open_memory(ctx, clear_remote=True) as memory,
        track(memory.store.count) as tracker,
        _stop_on_interrupt(tracker, as_json),
    ):
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


@contextmanager
def _stop_on_interrupt(tracker: Tracker, as_json: bool) -> Iterator[None]:
    """Ctrl+C: print how far the run got and what it wrote, then exit 130."""
    try:
        yield
    except KeyboardInterrupt as exc:
        report = exc.report if isinstance(exc, IndexInterrupted) else None
        if as_json:
            # new / changed count files looked at, not written: left out (see IndexInterrupted).
            counts = report.model_dump(exclude={"new", "changed"}) if report else {}
            done = {"files_done": tracker.done, "files_total": tracker.total}
            payload = {"interrupted": True, **done, **counts}
            console.print_json(json.dumps(payload))
        else:
            line = "interrupted before the first file"
            if tracker.total:
                line = f"interrupted at file {tracker.done} of {tracker.total}"
            if report is not None:
                line += (
                    f": {report.chunks_written} chunks written, {report.chunks_deleted} deleted, "
                    f"{report.texts_embedded} texts embedded; {report.seconds:.2f}s"
                )
            console.print(line, highlight=False, soft_wrap=True)
        err_console.print(INTERRUPTED, highlight=False, soft_wrap=True)
        raise typer.Exit(130) from None
