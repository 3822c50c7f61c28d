"""``engram capture``, ``history``, ``age`` and ``prune``: memory that manages itself."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from engram.cli.common import console, err_console, open_memory, read_stdin
from engram.errors import ConfigError, ExtractorError
from engram.extraction import MODES, check_mode
from engram.memories.capture import CaptureReport, project_files, read_messages
from engram.memories.scopes import SCOPES, Scope


def register(app: typer.Typer) -> None:
    app.command("capture")(capture_command)
    app.command("history")(history_command)
    app.command("age")(age_command)
    app.command("prune")(prune_command)


def _say(text: str) -> None:
    console.print(text, markup=False, highlight=False, soft_wrap=True)


def _warn(text: str) -> None:
    err_console.print(f"warning: {text}", markup=False, highlight=False, soft_wrap=True)


def capture_command(
    ctx: typer.Context,
    source: Annotated[
        str | None,
        typer.Argument(
            help="JSON messages or a Claude Code transcript (.jsonl); - or nothing reads stdin. "
            "Not used with --mode init."
        ),
    ] = None,
    mode: Annotated[
        str, typer.Option(help=f"Extraction mode: {', '.join(MODES)}.", show_default=True)
    ] = "normal",
    scope: Annotated[
        str, typer.Option(help="Write to the project's or the user's memory folder.")
    ] = "project",
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Turn a conversation (or, with --mode init, the project's files) into memories."""
    checked = check_mode(mode)
    if scope not in SCOPES:
        raise ConfigError(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    where: Scope = "user" if scope == "user" else "project"
    with open_memory(ctx) as memory:
        if checked == "init":
            if source is not None:
                raise ConfigError("--mode init reads the project's files; give no input file")
            messages = project_files(memory.config.root, memory.config.capture.init_files)
        else:
            messages = read_messages(*_read_input(source))
        report = memory.capture(messages, checked, scope=where)
    if report.failed:  # one line says it all; --json still gets the whole report
        if as_json:
            console.print_json(report.model_dump_json())
        raise ExtractorError(
            f"{report.warnings[0]}; nothing was captured and nothing stored changed"
        )
    _print_capture(report, as_json)


def _read_input(source: str | None) -> tuple[str, str]:
    if source is None or source == "-":
        if source is None and sys.stdin.isatty():
            raise ConfigError(
                "give a transcript file, or pipe JSON messages in: "
                'echo \'[{"role": "user", "content": "..."}]\' | engram capture -'
            )
        return read_stdin(), "stdin"
    path = Path(source).expanduser()
    if not path.is_file():
        raise ConfigError(f"{source} is not a file; give a transcript or - for stdin")
    try:
        return path.read_text(encoding="utf-8"), source
    except UnicodeDecodeError:
        raise ConfigError(f"{source} is not UTF-8 text; give a JSON or JSONL transcript") from None


def _print_capture(report: CaptureReport, as_json: bool) -> None:
    if as_json:
        console.print_json(report.model_dump_json())
        return
    for warning in report.warnings:
        _warn(warning)
    for stored in report.stored:
        extra = f", supersedes {', '.join(stored.superseded)}" if stored.superseded else ""
        _say(f"{stored.action} {stored.type}: {stored.title} ({stored.path}{extra})")
    _say(report.summary())


def history_command(
    ctx: typer.Context,
    id_or_path: Annotated[str, typer.Argument(help="A memory id, or its path.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """Show every wording of a memory, oldest first: its earlier revisions, the memories it
    replaced or was replaced by, and those it conflicts with."""
    with open_memory(ctx) as memory:
        found = memory.history(id_or_path)
    if as_json:
        console.print_json(found.model_dump_json())
        return
    types = {m.id: m.type for m in found.chain}
    for entry in found.entries:
        marker = "→" if entry.kind == "memory" and entry.memory_id == found.memory.id else " "
        kind = types.get(entry.memory_id) or "-"
        why = f" ({entry.why})" if entry.why else ""
        _say(
            f"{marker} {entry.when or '?'} {entry.memory_id or '-'} [{kind}, {entry.status}{why}] "
            f"{entry.path}"
        )
        for line in entry.wording.splitlines() or [""]:
            _say(f"    {line}")
    if len(found.chain) > 1 or found.entries[:-1]:
        _say(
            "restore an earlier version: engram restore ID [--revision N] "
            "(what it replaces is kept as a revision)"
        )


def age_command(
    ctx: typer.Context,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Only say what would change.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Apply the aging rules: only the newest progress memory per project stays live; session
    summaries beyond the newest few are condensed (or archived)."""
    with open_memory(ctx) as memory:
        report = memory.age(dry_run=dry_run)
    if as_json:
        console.print_json(report.model_dump_json())
        return
    for warning in report.warnings:
        _warn(warning)
    would = "would be " if dry_run else ""
    for label, paths in (
        ("superseded", report.superseded),
        ("condensed", report.condensed),
        ("archived", report.archived),
    ):
        for path in paths:
            _say(f"{would}{label}: {path}")
    for path in report.learned:
        _say(f"learned: {path}")
    total = len(report.superseded) + len(report.condensed) + len(report.archived)
    _say(f"{total} memories {'would age' if dry_run else 'aged'}")


def prune_command(
    ctx: typer.Context,
    max_age: Annotated[
        float | None,
        typer.Option(help="Remove memories unused for more than DAYS * importance days."),
    ] = None,
    max_count: Annotated[
        int | None, typer.Option(help="Then keep at most N memories (least valuable go first).")
    ] = None,
    scope: Annotated[str, typer.Option(help="project, user or all.")] = "project",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print what would be removed; remove nothing.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Remove old, unused, low-importance memories first (files and their index entries)."""
    from engram.memories.prune import describe

    with open_memory(ctx) as memory:
        report = memory.prune(
            max_age_days=max_age, max_count=max_count, scope=scope, dry_run=dry_run
        )
    if as_json:
        console.print_json(report.model_dump_json())
        return
    verb = "would remove" if dry_run else "removed"
    for candidate in report.removed:
        _say(f"{verb}: {describe(candidate)}")
    _say(f"{verb} {len(report.removed)} of {report.examined} memories")
