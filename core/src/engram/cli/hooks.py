"""``engram hooks``: let an agent host (Claude Code, OpenCode) call engram itself: recall at
session start, index and capture at session end. ``install`` / ``uninstall`` edit the host's own
config; ``run`` is what the host runs, and never fails the host's session."""

from __future__ import annotations

import contextlib
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from engram.hosts import claude_code, opencode
from engram.hosts.command import engram_argv
from engram.hosts.files import Change
from engram.hosts.runner import Outcome, run_hook, unavailable
from engram.hosts.worker import describe


class Event(StrEnum):
    session_start = "session-start"
    session_end = "session-end"


class Host(StrEnum):
    claude_code = "claude-code"
    opencode = "opencode"


class Scope(StrEnum):
    user = "user"
    project = "project"


def register(app: typer.Typer) -> None:
    hooks = typer.Typer(
        help="Run engram from an agent host's session hooks (Claude Code, OpenCode).",
        no_args_is_help=True,
        rich_markup_mode=None,
    )
    hooks.command("run")(run_command)
    hooks.command("install")(install_command)
    hooks.command("uninstall")(uninstall_command)
    app.add_typer(hooks, name="hooks")


def run_command(
    ctx: typer.Context,
    event: Annotated[
        Event,
        typer.Argument(
            help="session-start: print the recall block; session-end: index and capture sessions."
        ),
    ],
    host: Annotated[
        Host | None, typer.Option(help="The host, for its output format (default: plain text).")
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=0.01, help="Give up after this many seconds, exit 0.")
    ] = 60.0,
) -> None:
    """What a host runs: always exits 0; a failure is one line on stderr, never on stdout."""
    try:
        obj = ctx.find_root().obj or {}
        outcome = run_hook(
            event.value,
            host.value if host else None,
            timeout,
            config_file=obj.get("config_file"),
            overrides=obj.get("overrides"),
            stdin=sys.stdin,
        )
    except BaseException as exc:  # the host's session must never see a failure
        outcome = unavailable(describe(exc))
    _emit(outcome)


def _emit(outcome: Outcome) -> None:
    with contextlib.suppress(OSError):  # the host closed its end: nothing left to tell it
        if outcome.stdout:
            sys.stdout.write(outcome.stdout)
            sys.stdout.flush()
        for line in outcome.stderr:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


ScopeOption = Annotated[
    Scope, typer.Option(help="user: every project; project: this one (--project-dir).")
]
ProjectOption = Annotated[
    Path | None,
    typer.Option("--project-dir", help="The project for --scope project (default: here)."),
]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print the change as a diff; write nothing.")
]


def install_command(
    ctx: typer.Context,
    host: Annotated[Host, typer.Argument(help="claude-code or opencode.")],
    scope: ScopeOption = Scope.user,
    project_dir: ProjectOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Make the host run `engram hooks run session-start` / `session-end` itself."""
    config = (ctx.find_root().obj or {}).get("config_file")
    base = engram_argv()
    folder = (project_dir or Path.cwd()).resolve()
    if host is Host.claude_code:
        path = claude_code.settings_path(scope.value, folder)
        change = claude_code.plan_install(path, base, config)
    else:
        change = opencode.plan_install(opencode.plugin_dir(scope.value, folder), base, config)
    _finish(change, dry_run)


def uninstall_command(
    host: Annotated[Host, typer.Argument(help="claude-code or opencode.")],
    scope: ScopeOption = Scope.user,
    project_dir: ProjectOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Remove engram's hooks from the host's config, and nothing else."""
    folder = (project_dir or Path.cwd()).resolve()
    if host is Host.claude_code:
        change = claude_code.plan_uninstall(claude_code.settings_path(scope.value, folder))
    else:
        change = opencode.plan_uninstall(opencode.plugin_dir(scope.value, folder))
    _finish(change, dry_run)


def _finish(change: Change, dry_run: bool) -> None:
    if dry_run:
        typer.echo(change.diff() or f"{change.path}: nothing to change", nl=not change.changed)
        return
    change.apply()
    typer.echo(f"{change.path}: {change.action()}")
