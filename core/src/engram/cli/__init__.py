"""The ``engram`` command. Library errors become one line on stderr and exit code 1; usage errors
get click's usage message and exit code 2; Ctrl+C exits 130. Never a traceback, but for a bug."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer

from engram.cli.common import err_console, global_options, print_labelled
from engram.cli.plugin_commands import register_plugin_commands
from engram.errors import EngramError

app = typer.Typer(
    name="engram",
    help="Durable, searchable memory for AI agents: markdown in, hybrid search out.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    # Plain help and errors: Rich markup would eat every "[...]" in them ("[default: 6]",
    # "[search] limit", "pip install 'engram[agent]'").
    rich_markup_mode=None,
)
app.callback()(global_options)
# One module per area (index, search, info, ...); each adds its commands through register(app).
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if hasattr(_module, "register"):
        _module.register(app)
# Then the commands of installed plugins (the register_commands hook), e.g. engram-bench's.
register_plugin_commands(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app and turn every expected failure into a one-line message.

    Typer runs in standalone mode, which prints a usage error as click always has (usage line,
    hint, "Error: ...") and exits 2, and turns Ctrl+C into exit 130: every exit, success
    included, arrives here as SystemExit. Typer 0.26+ vendors click (typer._click is private), so
    no click exception is caught by name; only the library's own errors pass through typer."""
    try:
        app(args=argv, prog_name="engram", standalone_mode=True)
    except SystemExit as exc:
        return _exit_code(exc.code)
    except EngramError as exc:
        print_labelled("error:", str(exc), style="bold red")
        return 1
    return 0


def _exit_code(code: str | int | None) -> int:
    """``sys.exit``'s argument as a process exit code (a message is printed, and means 1)."""
    if code is None or isinstance(code, int):
        return code or 0
    err_console.print(code, highlight=False, soft_wrap=True)
    return 1


def run() -> None:
    sys.exit(main())
