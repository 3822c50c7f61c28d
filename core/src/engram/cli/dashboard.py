"""``engram dashboard``: the project's memory as a local, read-only web page. Needs the
``dashboard`` extra; without it the command says how to install it."""

from __future__ import annotations

import webbrowser
from typing import Annotated

import typer

from engram.cli.common import console, open_memory, print_labelled
from engram.distributions import install_hint
from engram.errors import ConfigError

DASHBOARD_EXTRA = install_hint("engram-kit-core", "dashboard")


def register(app: typer.Typer) -> None:
    app.command("dashboard")(dashboard_command)


def dashboard_command(
    ctx: typer.Context,
    host: Annotated[str, typer.Option(help="Address to listen on (loopback only by default).")] = (
        "127.0.0.1"
    ),
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port to listen on.")] = 8765,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser.")
    ] = False,
    allow_remote: Annotated[
        bool,
        typer.Option(
            help="Allow a non-loopback --host (anyone who reaches it reads every memory)."
        ),
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            help="With --allow-remote: a Host name the pages answer to besides loopback and "
            "--host (repeatable; e.g. the machine's name when listening on 0.0.0.0).",
        ),
    ] = None,
) -> None:
    """Serve memories (by type and scope, with search and history), index stats, usage and
    cost over time and recent activity on http://127.0.0.1:8765, read-only. Ctrl+C stops it."""
    try:
        import uvicorn  # noqa: F401  (served with it; checked here to say what to install)

        from engram.dashboard.app import build_app
        from engram.dashboard.data import DashboardData
        from engram.dashboard.server import (
            allowed_hosts,
            already_running,
            bind,
            check_host,
            serve,
            url_for,
        )
    except ImportError as exc:
        raise ConfigError(f"the dashboard needs {exc.name!r}; {DASHBOARD_EXTRA}") from None
    warning = check_host(host, allow_remote=allow_remote)
    if allowed_host and not allow_remote:
        raise ConfigError("--allowed-host serves other names than loopback; add --allow-remote")
    if warning:
        print_labelled("warning:", warning)
    url = url_for(host, port)
    from engram.keeper import Keeper

    keeper = Keeper(open_memory(ctx))
    try:
        memory = keeper.memory
        project = memory.config.root.resolve()
        running = already_running(project, url)
        if running:
            console.print(f"already running at {running}", highlight=False)
            return
        sock = bind(host, port)
        console.print(f"engram dashboard of {project} at {url} (Ctrl+C stops it)", highlight=False)
        if open_browser:
            webbrowser.open(url)
        app = build_app(DashboardData(keeper), allowed_hosts(host, allowed_host or []))
        serve(app, sock, project, url)
    finally:
        keeper.memory.close()
