"""What every command shares: global options, opening the memory, consoles."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.text import Text

from engram import __version__

if TYPE_CHECKING:  # loaded by the commands that open a memory, not by --help or --version
    from engram.config import EngramConfig
    from engram.errors import IndexDamaged
    from engram.memory import Memory

# Markup off: what the CLI prints is paths, notes, queries and library messages, where "[agent]"
# or "[search]" is text, not a style. Colour comes from print_labelled, never from the text.
console = Console(markup=False)
err_console = Console(stderr=True, markup=False)


def print_labelled(label: str, text: str, style: str = "yellow") -> None:
    """One message on stderr: a coloured label ("error:", "warning:"), then ``text`` as it is."""
    err_console.print(Text.assemble((label, style), " ", text), highlight=False, soft_wrap=True)


def version_line() -> str:
    return f"engram {__version__}"


def _print_version(value: bool) -> None:
    if value:
        console.print(version_line(), highlight=False)
        raise typer.Exit()


def global_options(
    ctx: typer.Context,
    config: Annotated[
        Path | None,
        typer.Option("--config", "-c", help="Project config file (default: nearest engram.toml)."),
    ] = None,
    store: Annotated[str | None, typer.Option(help="Store backend to use (e.g. sqlite).")] = None,
    embedder: Annotated[
        str | None, typer.Option(help="Embedder to use (e.g. local, hash).")
    ] = None,
    set_: Annotated[
        list[str] | None,
        typer.Option("--set", help="Override any setting: --set search.limit=10 (repeatable)."),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version", is_eager=True, callback=_print_version, help="Print the version and exit."
        ),
    ] = False,
) -> None:
    """Durable, searchable memory for AI agents."""
    from engram.config import parse_overrides

    overrides: dict[str, Any] = parse_overrides(set_ or [])
    if store:
        overrides.setdefault("store", {})["backend"] = store
    if embedder:
        overrides.setdefault("embedder", {})["provider"] = embedder
    ctx.obj = {"config_file": config, "overrides": overrides}


loaded: list[EngramConfig] = []  # the configuration the command ran with (``main`` marks damage)


def get_config(ctx: typer.Context) -> EngramConfig:
    from engram.config import load_config

    obj = ctx.find_root().obj or {}
    config = load_config(obj.get("overrides"), project_file=obj.get("config_file"))
    loaded[:] = [config]
    return config


_suspect: list[IndexDamaged] = []  # damage a first run of this command met (``main``)


def heal_next_open(damaged: IndexDamaged) -> bool:
    """Have the next ``open_memory`` of this process heal ``damaged`` (``main`` runs the
    command once more); False when a run already did, so the command gives up."""
    if _suspect:
        return False
    _suspect.append(damaged)
    return True


def open_memory(ctx: typer.Context, *, clear_remote: bool = False) -> Memory:
    """``clear_remote``: the command recreates the index (see ``recovery.open_store``). After
    a run that met a damaged index (``heal_next_open``), it is checked and healed first."""
    from engram.memory import Memory

    suspect = _suspect[0] if _suspect else None
    return Memory.open(get_config(ctx), clear_remote=clear_remote, suspect=suspect)


def read_stdin(what: str = "stdin") -> str:
    """All of stdin as text, refused in one line (``InvalidText``) unless it is UTF-8: bytes
    that are not would otherwise reach a store or a file as lone surrogates, or a traceback."""
    from engram.text.unicode import InvalidText, require_unicode

    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:  # a text-only stream (a test's, an embedding host's)
        text: str = sys.stdin.read()
        require_unicode(text, what)
        return text
    data: bytes = stream.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidText(
            f"{what} is not valid UTF-8 text (byte {exc.start}); give it as UTF-8"
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")  # as text mode reads lines
