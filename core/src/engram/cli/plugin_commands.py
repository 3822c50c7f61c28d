"""Commands that plugins add to the CLI (the ``register_commands`` hook), and what ``engram``
says for a well-known command whose package is not installed."""

from __future__ import annotations

import logging
from collections.abc import Callable

import typer

from engram.distributions import install_hint
from engram.errors import ConfigError, EngramError
from engram.plugins import get_plugin_manager

log = logging.getLogger(__name__)

# Commands that live in a package of their own: the hint shown when it is missing.
PACKAGED_COMMANDS = {
    "bench": (
        "engram bench is the benchmark harness, in its own package; from an engram checkout: "
        + install_hint("engram-bench")
    ),
}


def register_plugin_commands(app: typer.Typer) -> None:
    """Let every installed plugin add its commands. A plugin that cannot be loaded costs its
    commands only: the error shows again, in one line, when a command needs the plugins."""
    try:
        get_plugin_manager().hook.register_commands(app=app)
    except EngramError as exc:
        log.warning("plugin commands not added: %s", exc)
    have = {info.name for info in app.registered_commands}
    for name, hint in PACKAGED_COMMANDS.items():
        if name not in have:
            app.command(
                name,
                help=f"Not installed: {hint}.",
                context_settings={"allow_extra_args": True, "ignore_unknown_options": True},
            )(_missing(hint))


def _missing(hint: str) -> Callable[[], None]:
    def command() -> None:
        raise ConfigError(hint)

    return command
