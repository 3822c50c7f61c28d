"""The plugin manager: built-in default plugins plus every entry point in the ``engram`` group.

- ``ENGRAM_LOAD_PLUGINS=a,b``: load only these distributions (or entry point names) besides the
  built-ins; an empty value loads none.
- ``ENGRAM_TRACE_PLUGINS=1``: print every hook call and its result to stderr.
"""

from __future__ import annotations

import functools
import importlib
import os
import re
import sys
from collections.abc import Callable
from importlib import metadata
from typing import Any

import pluggy
from pydantic import BaseModel

from engram import hookspecs
from engram.errors import DuplicatePlugin, PluginError, PluginNotFound
from engram.registry import KINDS, Dotted, Entry, Kind, NoOptions, Registry

DEFAULT_PLUGINS = (
    "engram.default_plugins.memory_store",
    "engram.default_plugins.hash_embedder",
    "engram.default_plugins.searchers",
    "engram.default_plugins.rules",
)
ENTRY_POINT_GROUP = "engram"


def get_plugin_manager(*, load_entry_points: bool = True) -> pluggy.PluginManager:
    """A fresh plugin manager (tests build their own; nothing happens at import time)."""
    pm = pluggy.PluginManager(hookspecs.PROJECT)
    pm.add_hookspecs(hookspecs)
    # Historic: each plugin that declares hooks of its own adds them as it is registered.
    pm.hook.register_hookspecs.call_historic(kwargs={"register": pm.add_hookspecs})
    for name in DEFAULT_PLUGINS:
        pm.register(importlib.import_module(name), name=name)
    if load_entry_points:
        _load_entry_points(pm)
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise PluginError(
            f"plugin {pm.get_name(exc.plugin)!r} implements a hook engram does not have "
            f"({exc}); check the hook name against docs/plugins/hooks.md, or leave the "
            f"plugin out with ENGRAM_LOAD_PLUGINS"
        ) from None
    if os.environ.get("ENGRAM_TRACE_PLUGINS"):
        pm.trace.root.setwriter(lambda msg: print(msg, end="", file=sys.stderr))
        pm.enable_tracing()
    return pm


def normalize(name: str) -> str:
    """Distribution names compare as PyPI does: case, ``-``, ``_`` and ``.`` don't matter."""
    return re.sub(r"[-_.]+", "-", name).lower()


def allowed_plugins() -> set[str] | None:
    """The ENGRAM_LOAD_PLUGINS allow-list, or None when every installed plugin may load."""
    raw = os.environ.get("ENGRAM_LOAD_PLUGINS")
    if raw is None:
        return None
    return {normalize(part.strip()) for part in raw.split(",") if part.strip()}


def _load_entry_points(pm: pluggy.PluginManager) -> None:
    allow = allowed_plugins()
    loaded: dict[str, str | None] = {}
    for ep, dist, _ in _entry_points():
        if (
            allow is not None
            and normalize(ep.name) not in allow
            and (dist is None or normalize(dist) not in allow)
        ):
            continue
        if ep.name in loaded:
            if loaded[ep.name] == dist:
                continue  # the same distribution seen twice on sys.path
            raise DuplicatePlugin(
                f"two distributions install an engram plugin named {ep.name!r}: "
                f"{loaded[ep.name]} and {dist}; uninstall one, or choose one with "
                f"ENGRAM_LOAD_PLUGINS"
            )
        if pm.is_blocked(ep.name):
            continue
        try:
            plugin = ep.load()
        except ImportError as exc:
            raise PluginNotFound(
                f"plugin {ep.name!r} from {dist or 'an unknown distribution'} failed to import "
                f"({exc}); reinstall it (pip install --force-reinstall {dist or ep.name}) or "
                f"leave it out with ENGRAM_LOAD_PLUGINS"
            ) from exc
        pm.register(plugin, name=ep.name)
        loaded[ep.name] = dist


def build_registry(pm: pluggy.PluginManager) -> Registry:
    """Ask every plugin to register its parts; duplicates raise ``DuplicatePlugin``."""
    registry = Registry()
    hooks: dict[Kind, Any] = {
        # A store that calls hooks binds the manager that opens it, never a global one.
        "store": functools.partial(pm.hook.register_stores, plugin_manager=pm),
        "embedder": pm.hook.register_embedders,
        "extractor": pm.hook.register_extractors,
        "searcher": pm.hook.register_searchers,
    }
    for kind in KINDS:
        hooks[kind](register=_registrar(registry, kind))
    return registry


def _registrar(registry: Registry, kind: Kind) -> Callable[..., None]:
    def register(
        name: str,
        factory: Callable[..., Any] | str,
        *,
        options: type[BaseModel] = NoOptions,
        **bound: Any,
    ) -> None:
        if isinstance(factory, str):
            factory = Dotted(factory)  # imported on the first build, not on every command
        if bound:
            factory = functools.partial(factory, **bound)
        plugin, dist, version = _origin(factory)
        registry.add(
            Entry(
                kind=kind,
                name=name,
                factory=factory,
                options=options,
                plugin=plugin,
                distribution=dist,
                version=version,
            )
        )

    return register


def _origin(factory: Callable[..., Any]) -> tuple[str, str | None, str | None]:
    """(module, distribution, version) that a factory comes from."""
    while isinstance(factory, functools.partial):  # a factory with the plugin manager bound
        factory = factory.func
    if isinstance(factory, Dotted):
        module = factory.module
    else:
        module = getattr(factory, "__module__", None) or "unknown"
    top = module.split(".")[0]
    dist = _entry_point_distributions().get(top) or _installed_distributions().get(top)
    if dist is None:
        return module, None, None
    return module, dist, _version(dist)


@functools.cache
def _entry_points() -> tuple[tuple[metadata.EntryPoint, str | None, str | None], ...]:
    """The ``engram`` entry points with their distribution's name and version, scanned once a
    process: a scan reads every installed distribution's metadata (a tenth of a second or more
    in a large environment), and each ``dist.name`` parses its METADATA file again."""
    found = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        meta = ep.dist.metadata if ep.dist is not None else None
        found.append((ep, meta["Name"] if meta else None, meta["Version"] if meta else None))
    return tuple(found)


@functools.cache
def _version(dist: str) -> str | None:
    """A distribution's version: from an entry point's metadata when it has one (no search of
    sys.path), else looked up by name."""
    for _, name, version in _entry_points():
        if name == dist:
            return version
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def _entry_point_distributions() -> dict[str, str]:
    """Top-level module → distribution, from the entry points (they name their module even for
    editable installs) and core's own name: enough for every plugin loaded the usual way."""
    found = {"engram": "engram-kit-core"}
    for ep, name, _ in _entry_points():
        if name is not None:
            found.setdefault(ep.module.split(".")[0], name)
    return found


@functools.cache
def _installed_distributions() -> dict[str, str]:
    """Top-level module → distribution for every installed one: reads every RECORD file (seconds
    on a large environment), so only for a plugin registered without an entry point."""
    return {top: dists[0] for top, dists in metadata.packages_distributions().items() if dists}


def describe_plugins(registry: Registry) -> list[dict[str, str | None]]:
    """What ``engram plugins`` prints: one row per registered part."""
    return [
        {
            "name": e.name,
            "kind": e.kind,
            "distribution": e.distribution,
            "version": e.version,
            "module": e.plugin,
        }
        for e in registry.entries()
    ]
