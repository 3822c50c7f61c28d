"""``engram mcp``, ``engram watch`` and ``engram sessions``: engram as a live agent companion.

``mcp`` and ``watch`` need the ``agent`` extra (``pip install -e './core[agent]'`` in a checkout);
they import it only when run, so the rest of the CLI works without it.
"""

from __future__ import annotations

import json
import threading
from typing import Annotated

import typer

from engram.cli.common import console, err_console, open_memory, print_labelled
from engram.distributions import install_hint
from engram.errors import ConfigError
from engram.ingest.report import IndexReport

AGENT_EXTRA = install_hint("engram-kit-core", "agent")


def register(app: typer.Typer) -> None:
    app.command("mcp")(mcp_command)
    app.command("watch")(watch_command)
    app.command("sessions")(sessions_command)


def _need(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        raise ConfigError(f"this command needs the {module!r} package; {AGENT_EXTRA}") from None


def mcp_command(
    ctx: typer.Context,
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option(help="Loopback address for --http.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="Port for --http.")] = 8765,
    watch: Annotated[
        bool, typer.Option("--watch", help="Also re-index files as they change.")
    ] = False,
    read_only: Annotated[
        bool,
        typer.Option(
            "--read-only", help="Serve only the reading tools (writing ones are refused)."
        ),
    ] = False,
) -> None:
    """Serve the memory tools to an agent over MCP (stdio by default)."""
    _need("mcp")
    from engram import mcp
    from engram.tools.toolbox import Toolbox

    if http:
        mcp.check_loopback(host)
    from engram.keeper import Keeper

    # One keeper for the tools and the watcher: the memory it holds is replaced when the index
    # is healed under the server, so that one (not the first) is closed at the end.
    keeper = Keeper(open_memory(ctx), threading.RLock())
    try:
        toolbox = Toolbox(keeper, read_only=read_only)
        if watch:
            _need("watchfiles")
            from engram.cli.watch import background_watcher

            with background_watcher(keeper):
                mcp.run(toolbox, http=http, host=host, port=port)
        else:
            mcp.run(toolbox, http=http, host=host, port=port)
    finally:
        keeper.memory.close()


def watch_command(
    ctx: typer.Context,
    debounce_ms: Annotated[
        int, typer.Option(min=50, max=60_000, help="Group changes over at most this long.")
    ] = 1600,
    sessions: Annotated[
        bool | None,
        typer.Option("--sessions/--no-sessions", help="Watch transcripts (default: [sessions])."),
    ] = None,
) -> None:
    """Index now, then re-index whenever vault or memory files change (Ctrl+C stops)."""
    _need("watchfiles")
    from engram.cli.watch import WatchEvent, watch_memory

    def show(event: WatchEvent) -> None:
        if event.error:
            print_labelled(f"{event.source}:", event.error, style="red")
        elif event.report is not None:
            for warning in event.report.warnings:
                print_labelled("warning:", warning)
            console.print(f"{event.source}: {event.report.summary()}", highlight=False)

    from engram.keeper import Keeper

    keeper = Keeper(open_memory(ctx))
    try:
        try:
            watch_memory(
                keeper,
                on_event=show,
                on_ready=lambda: err_console.print("watching for changes (Ctrl+C stops)"),
                debounce_ms=debounce_ms,
                sessions=sessions,
            )
        except KeyboardInterrupt:
            err_console.print("stopped watching", highlight=False)
            raise typer.Exit(130) from None
    finally:
        keeper.memory.close()


def sessions_command(
    ctx: typer.Context,
    capture: Annotated[
        bool,
        typer.Option(
            "--capture",
            help="Then turn sessions that grew since their last capture into memories "
            "([capture] cooldown_seconds apart).",
        ),
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Index agent transcripts (OpenCode, Claude Code): new and grown sessions only."""
    with open_memory(ctx) as memory:
        report = memory.index_sessions()
        captured = memory.capture_sessions() if capture else None
    if as_json and captured is not None:
        payload = {"index": report.model_dump(), "capture": captured.model_dump(mode="json")}
        console.print_json(json.dumps(payload))
        return
    _print(report, as_json)
    if captured is not None:
        for failure in captured.failed:
            err_console.print(f"warning: capture failed: {failure}", markup=False, highlight=False)
        for warning in captured.warnings:
            err_console.print(f"warning: {warning}", markup=False, highlight=False)
        console.print(captured.summary(), markup=False, highlight=False)


def _print(report: IndexReport, as_json: bool) -> None:
    if as_json:
        console.print_json(json.dumps(report.model_dump()))
        return
    for skipped in report.skipped:
        print_labelled("skipped", f"{skipped.path}: {skipped.reason}")
    for warning in report.warnings:
        print_labelled("warning:", warning)
    console.print(report.summary().replace(" files", " sessions"), highlight=False)
