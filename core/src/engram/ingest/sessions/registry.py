"""The hosts engram knows, one line each: a name and where its folder's ``Host`` lives
(``engram.hosts.<name>``). A new host is its folder plus one ``register`` line here.

The table stands on this floor, and names each host by a dotted path loaded when asked (as the
store and embedder plugins are), because everything reads it: the config's ``[sessions]``
hosts, the session indexing here, ``hooks install`` and the hook runner. A host's folder holds
its hook worker's wiring too, which opens the memory that indexes sessions: imported by name
from here, no floor imports the one above it. Loading on demand also keeps the per-prompt hook
light: it loads only the host it answers."""

from __future__ import annotations

from importlib import import_module
from typing import Any

from engram.errors import ConfigError

_TABLE: dict[str, str] = {}
_LOADED: dict[str, Any] = {}


def register(name: str, target: str) -> None:
    """Name a host: ``target`` is ``"package.module:Class"``, built with no arguments."""
    if name in _TABLE and _TABLE[name] != target:
        raise ConfigError(f"host {name!r} is already registered as {_TABLE[name]}")
    _TABLE[name] = target


def unregister(name: str) -> None:
    """Forget a host (a test's sample host, once the test is done)."""
    _TABLE.pop(name, None)
    _LOADED.pop(name, None)


register("claude-code", "engram.hosts.claude_code:ClaudeCode")
register("opencode", "engram.hosts.opencode:OpenCode")


def names() -> list[str]:
    return list(_TABLE)


def load(name: str) -> Any:
    """The host called ``name``, built once; an unknown name is an error listing the known
    ones. Typed by its users: ``engram.hosts.base.Host`` for the hooks, ``SessionHost`` here."""
    if name not in _TABLE:
        raise ConfigError(f"unknown host {name!r}; engram knows {', '.join(names())}")
    if name not in _LOADED:
        module, _, attribute = _TABLE[name].partition(":")
        _LOADED[name] = getattr(import_module(module), attribute)()
    return _LOADED[name]
