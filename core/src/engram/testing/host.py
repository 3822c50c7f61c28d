"""The host, for a plugin's own tests: what a test needs of engram beyond the public line.

A plugin's test checks that its part registers and builds as engram builds it, runs the CLI
over it, or compares it with what core does with its results. Those are core's internals, which
move between releases; this module names them once, so a plugin's tests import them from here
(``engram.testing.host``) and never from the module they live in. Only tests need these names:
a plugin's source imports ``engram``.
"""

from __future__ import annotations

import pluggy

from engram import hookspecs
from engram.cli import main as run_cli
from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.plugins import build_registry, get_plugin_manager
from engram.search.fusion import weighted
from engram.stores.migrate import migrate
from engram.stores.parts import build_part

__all__ = [
    "HashEmbedder",  # the deterministic offline embedder (feature hashing), "hash" in a config
    "HashEmbedderOptions",
    "bare_plugin_manager",
    "build_part",  # a part from a config, as ``Memory.open`` builds it
    "build_registry",  # every installed plugin's parts, by kind and name
    "get_plugin_manager",  # engram's hookspecs and every installed plugin
    "migrate",  # ``engram migrate``'s copy from one store to another, with its report
    "run_cli",  # ``engram ARGS`` in this process: the exit code, output on stdout/stderr
    "weighted",  # the fusion core applies to a ``CandidateSearch`` store's two candidate lists
]


def bare_plugin_manager(*plugins: object) -> pluggy.PluginManager:
    """A manager as ``get_plugin_manager`` builds one (engram's hookspecs; a plugin's own added
    as it registers) holding ``plugins`` only: no built-in or installed plugin."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    pm.hook.register_hookspecs.call_historic(kwargs={"register": pm.add_hookspecs})
    for plugin in plugins:
        pm.register(plugin)
    return pm
