"""``engram hooks``: let an agent host (Claude Code, OpenCode) call engram itself: recall at
session start, index and capture at session end and before compaction. ``install`` /
``uninstall`` edit the host's own config; ``run`` is what the host runs, and never fails the
host's session. The hosts come from one list, ``engram.hosts.registry``."""

from __future__ import annotations

import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from engram.errors import ConfigError
from engram.hosts import registry
from engram.hosts.command import engram_argv
from engram.hosts.files import Change
from engram.hosts.runner import emit, run_hook, unavailable
from engram.hosts.worker import describe

HOST_NAMES = ", ".join(registry.names())


class Event(StrEnum):
    session_start = "session-start"
    session_end = "session-end"
    pre_compact = "pre-compact"
    prompt = "prompt"


class Scope(StrEnum):
    user = "user"
    project = "project"
    local = "local"


def _host(name: str) -> registry.Host:
    try:
        return registry.get(name)
    except ConfigError as exc:
        raise typer.BadParameter(str(exc)) from None


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
            help="session-start: catch up, then print the recall block; session-end, "
            "pre-compact: index and capture in a detached process, return at once; prompt: "
            "the few memories relevant to the prompt in the payload."
        ),
    ],
    host: Annotated[
        str | None,
        typer.Option(help=f"The host ({HOST_NAMES}): its payload and output format."),
    ] = None,
    timeout: Annotated[
        float, typer.Option(min=0.01, help="Give up after this many seconds, exit 0.")
    ] = 60.0,
    capture_timeout: Annotated[
        float,
        typer.Option(min=0.01, help="The detached capture's own cap, in seconds."),
    ] = 600.0,
) -> None:
    """What a host runs: always exits 0; a failure is one line on stderr, never on stdout."""
    try:
        obj = ctx.find_root().obj or {}
        outcome = run_hook(
            event.value,
            _host(host).name if host else None,
            timeout,
            config_file=obj.get("config_file"),
            overrides=obj.get("overrides"),
            stdin=sys.stdin,
            capture_timeout=capture_timeout,
        )
    except BaseException as exc:  # the host's session must never see a failure
        outcome = unavailable(describe(exc))
    emit(outcome)


ScopeOption = Annotated[
    Scope,
    typer.Option(
        help="user: every project; project: this one (--project-dir); local: this one, on "
        "this machine only (Claude Code's settings.local.json)."
    ),
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
    host: Annotated[str, typer.Argument(help=f"The host: {HOST_NAMES}.")],
    scope: ScopeOption = Scope.user,
    project_dir: ProjectOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Make the host run `engram hooks run session-start` / `session-end` itself."""
    config = (ctx.find_root().obj or {}).get("config_file")
    found = _scoped(host, scope)
    folder = (project_dir or Path.cwd()).resolve()
    _finish(found.plan_install(scope.value, folder, engram_argv(), config), dry_run)


def uninstall_command(
    host: Annotated[str, typer.Argument(help=f"The host: {HOST_NAMES}.")],
    scope: ScopeOption = Scope.user,
    project_dir: ProjectOption = None,
    dry_run: DryRunOption = False,
) -> None:
    """Remove engram's hooks from the host's config, and nothing else."""
    found = _scoped(host, scope)
    folder = (project_dir or Path.cwd()).resolve()
    _finish(found.plan_uninstall(scope.value, folder), dry_run)


def _scoped(name: str, scope: Scope) -> registry.Host:
    found = _host(name)
    if scope.value not in found.scopes:
        raise typer.BadParameter(
            f"{found.name} has no {scope.value} scope; use one of {', '.join(found.scopes)}"
        )
    return found


def _finish(change: Change, dry_run: bool) -> None:
    if dry_run:
        typer.echo(change.diff() or f"{change.path}: nothing to change", nl=not change.changed)
        return
    change.apply()
    typer.echo(f"{change.path}: {change.action()}")
