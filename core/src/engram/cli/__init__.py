"""The ``engram`` command. Library errors become one line on stderr and exit code 1; usage errors
get click's usage message and exit code 2 (an argument that is not UTF-8: one line, exit 2);
Ctrl+C exits 130. Never a traceback, but for a bug.

Start-up is paid by every host hook, so a command imports only its own module: ``COMMANDS`` says
which module registers which command, and plugins load only for a name not in it (``bench``) or
for the full listing (``engram --help``). ``--version`` imports neither typer nor pydantic.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import typer

# Command → the module under engram.cli whose register(app) adds it (tests/cli/test_cli_startup.py
# checks this against the modules). A name missing here still works: it builds the full app.
COMMANDS: dict[str, str] = {
    "mcp": "agent",
    "watch": "agent",
    "sessions": "agent",
    "dashboard": "dashboard",
    "hooks": "hooks",
    "index": "index",
    "rebuild": "index",
    "stats": "info",
    "plugins": "info",
    "doctor": "info",
    "capture": "lifecycle",
    "history": "lifecycle",
    "age": "lifecycle",
    "prune": "lifecycle",
    "migrate": "maintenance",
    "optimize": "maintenance",
    "reset": "maintenance",
    "remember": "memory",
    "forget": "memory",
    "list": "memory",
    "recall": "memory",
    "restore": "memory",
    "search": "search",
    "get": "search",
    "export": "transfer",
    "import": "transfer",
    "usage": "usage",
}

# Global options that take a value (the word after them is not the command).
_VALUED = frozenset({"--config", "-c", "--store", "--embedder", "--set"})


def command_name(argv: Sequence[str]) -> str | None:
    """The command an argument list runs: the first word that is not a global option or its
    value; None for ``engram``, ``engram --help`` and the like."""
    words = iter(argv)
    for word in words:
        if word in _VALUED:
            next(words, None)
        elif not word.startswith("-"):
            return word
    return None


def build_app(argv: Sequence[str] | None = None) -> typer.Typer:
    """The app for ``argv``: only the module of a known command, else every module and plugin."""
    import typer

    from engram.cli.common import global_options

    app = typer.Typer(
        name="engram",
        help="Durable, searchable memory for AI agents: markdown in, hybrid search out.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Plain help and errors: Rich markup would eat every "[...]" in them ("[default: 6]",
        # "[search] limit", "pip install -e './core[agent]'").
        rich_markup_mode=None,
    )
    app.callback()(global_options)
    name = command_name(argv) if argv is not None else None
    if name in COMMANDS:
        _module(COMMANDS[name]).register(app)
        return app
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        module = _module(info.name)
        if hasattr(module, "register"):
            module.register(app)
    # Then the commands of installed plugins (the register_commands hook), e.g. engram-bench's.
    from engram.cli.plugin_commands import register_plugin_commands

    register_plugin_commands(app)
    return app


def _module(name: str) -> Any:
    return importlib.import_module(f"{__name__}.{name}")


def __getattr__(name: str) -> Any:
    """``engram.cli.app``: the full app, every command and plugin (built on first use)."""
    if name == "app":
        app = build_app()
        globals()["app"] = app
        return app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: run the app and turn every expected failure into a one-line message.

    Typer runs in standalone mode, which prints a usage error as click always has (usage line,
    hint, "Error: ...") and exits 2, and turns Ctrl+C into exit 130: every exit, success
    included, arrives here as SystemExit. Typer 0.26+ vendors click (typer._click is private), so
    no click exception is caught by name; only the library's own errors pass through typer."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from engram import __version__

        print(f"engram {__version__}")
        return 0
    if command_name(args) == "hooks":  # what a host runs at every session start: no typer
        from engram.hosts import entry

        parsed = entry.parse(args)
        if parsed is not None:
            return entry.main(parsed)
    for number, word in enumerate(args, 1):
        if not _is_utf8(word):
            raw = word.encode("utf-8", "surrogateescape")
            sys.stderr.write(
                f"error: argument {number} ({raw!r}) is not valid UTF-8; engram takes its "
                "arguments as UTF-8 text\n"
            )
            return 2
    return _run(args)


def _run(args: list[str]) -> int:
    """The command, once more when it met a local index damaged below what opening reads (a
    broken table, a file cut short): the next open heals it (moved aside, rebuilt)."""
    from engram.cli import common
    from engram.errors import EngramError, IndexDamaged

    for attempt in (1, 2):
        try:
            build_app(args)(args=args, prog_name="engram", standalone_mode=True)
        except SystemExit as exc:
            return _exit_code(exc.code)
        except IndexDamaged as exc:
            if attempt == 1 and exc.files and common.heal_next_open(exc):
                continue
            from engram.stores import damage as damage_mark

            damage_mark.record(common.loaded[0] if common.loaded else None, exc)
            common.print_labelled("error:", _one_line(str(exc)), style="bold red")
            return 1
        except EngramError as exc:
            common.print_labelled("error:", _one_line(str(exc)), style="bold red")
            return 1
        except OSError as exc:  # the system refused a path given (too long, not allowed, gone)
            common.print_labelled("error:", _one_line(_os_message(exc)), style="bold red")
            return 1
        return 0
    return 0


def _one_line(message: str) -> str:
    """An error as one line: a line break or control character a user's value brought into it
    (a path with a newline) is shown escaped, so the message stays one line for scripts."""
    if message.isprintable():
        return message
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in message)


def _os_message(exc: OSError) -> str:
    """An operating-system error as one short line: what failed, on which path (cut short)."""
    name = exc.filename
    where = "" if name is None else f": {str(name)[:120]}{'…' if len(str(name)) > 120 else ''}"
    return f"{exc.strerror or type(exc).__name__}{where}"


def _is_utf8(word: str) -> bool:
    """Whether an argument was UTF-8: Python turns other bytes of argv into lone surrogates,
    which no store, file or JSON can hold (refused here, in one line, for every command)."""
    try:
        word.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _exit_code(code: str | int | None) -> int:
    """``sys.exit``'s argument as a process exit code (a message is printed, and means 1)."""
    if code is None or isinstance(code, int):
        return code or 0
    from engram.cli.common import err_console

    err_console.print(code, highlight=False, soft_wrap=True)
    return 1


def run() -> None:
    sys.exit(main())
