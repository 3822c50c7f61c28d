"""The ``engram`` command. Library errors become one line on stderr and exit code 1."""

from __future__ import annotations

import importlib
import pkgutil
import sys

import click
import typer

from engram.cli.common import err_console, global_options
from engram.errors import EngramError

app = typer.Typer(
    name="engram",
    help="Durable, searchable memory for AI agents: markdown in, hybrid search out.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
app.callback()(global_options)
# One module per area (index, search, info, ...); each adds its commands through register(app).
for _info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
    _module = importlib.import_module(f"{__name__}.{_info.name}")
    if hasattr(_module, "register"):
        _module.register(app)


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app and turn every expected failure into a one-line message."""
    try:
        app(args=argv, standalone_mode=False)
    except EngramError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, soft_wrap=True)
        return 1
    except click.exceptions.Abort:
        err_console.print("aborted")
        return 1
    except click.ClickException as exc:
        exc.show()
        return exc.exit_code
    except KeyboardInterrupt:
        err_console.print("interrupted")
        return 130
    return 0


def run() -> None:
    sys.exit(main())
