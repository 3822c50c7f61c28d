"""Who provides what: ``{kind: {name: Entry}}``, filled by the ``register_*`` hooks.

Duplicate and unknown names are errors that list what is installed and how to get more.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from engram.distributions import providing
from engram.errors import DuplicatePlugin, PluginNotFound
from engram.install import install_hint

Kind = Literal["store", "embedder", "extractor", "searcher"]
KINDS: tuple[Kind, ...] = ("store", "embedder", "extractor", "searcher")


class NoOptions(BaseModel):
    """Options model for parts that take none; unknown keys are still an error."""

    model_config = ConfigDict(extra="forbid")


class Register(Protocol):
    """``register(name, "package.module:Class", options=Model)``: the class is imported when the
    part is first built; a callable works too. Keywords after ``options`` are passed to the
    factory on every build (a store binds its ``plugin_manager`` so)."""

    def __call__(
        self,
        name: str,
        factory: Callable[..., Any] | str,
        *,
        options: type[BaseModel] = NoOptions,
        **bound: Any,
    ) -> None: ...


@dataclass(frozen=True)
class Entry:
    kind: Kind
    name: str
    factory: Callable[..., Any]
    options: type[BaseModel]
    plugin: str
    distribution: str | None
    version: str | None

    def build(self, options: BaseModel) -> Any:
        return self.factory(options)


class Registry:
    def __init__(self) -> None:
        self._entries: dict[Kind, dict[str, Entry]] = {k: {} for k in KINDS}

    def add(self, entry: Entry) -> None:
        existing = self._entries[entry.kind].get(entry.name)
        if existing is not None:
            raise DuplicatePlugin(
                f"two plugins register the {entry.kind} {entry.name!r}: "
                f"{_who(existing)} and {_who(entry)}; uninstall one, or block one with "
                f"ENGRAM_LOAD_PLUGINS"
            )
        self._entries[entry.kind][entry.name] = entry

    def get(self, kind: Kind, name: str) -> Entry:
        try:
            return self._entries[kind][name]
        except KeyError:
            pass
        installed = ", ".join(sorted(self._entries[kind])) or "none"
        hint = ""
        dist = providing(kind, name)
        if dist:
            hint = f"; install it from an engram checkout: {install_hint(dist.name)}"
        raise PluginNotFound(
            f"no {kind} named {name!r} is installed (installed: {installed}){hint}"
        )

    def names(self, kind: Kind) -> list[str]:
        return sorted(self._entries[kind])

    def entries(self) -> list[Entry]:
        return [e for kind in KINDS for _, e in sorted(self._entries[kind].items())]


def _who(entry: Entry) -> str:
    return entry.distribution or entry.plugin
