"""The hooks a plugin can implement. Declared once here; documented in docs/plugins/hooks.md.

Register-callback style (as in simonw/llm): the plugin calls ``register(name, factory,
options=Model)``, the factory a callable or its ``"package.module:Class"`` path (imported on the
first build), and core owns names, collisions and errors. A hookimpl may take fewer
arguments than its spec, so hooks can grow without breaking plugins.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import pluggy

from engram.registry import Register

if TYPE_CHECKING:  # one annotation; every hook caller would otherwise import typer
    import typer

PROJECT = "engram"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def register_stores(register: Register, plugin_manager: pluggy.PluginManager) -> None:
    """Register store factories; a store that calls hooks binds ``plugin_manager`` into its own."""


@hookspec
def register_embedders(register: Register) -> None:
    """Register embedder factories, by path so they are imported on first build:
    ``register("openai", "engram_openai.embedder:OpenAIEmbedder", options=OpenAIOptions)``."""


@hookspec
def register_extractors(register: Register) -> None:
    """Register extractor factories that turn conversations into typed memories."""


@hookspec
def register_searchers(register: Register) -> None:
    """Register searcher factories (ranking strategies over a store and an embedder)."""


@hookspec(historic=True)
def register_hookspecs(register: Callable[[object], None]) -> None:
    """Declare a plugin's own hooks: ``register(module)`` adds the hookspecs marked in it."""


@hookspec
def register_commands(app: typer.Typer) -> None:
    """Add commands to the ``engram`` CLI: ``app.command("bench")(bench_command)``. Called once
    when the CLI starts; a command runs in the CLI's error handling (an ``EngramError`` is one
    line and exit 1), and must keep its imports light until it runs."""
