"""Who provides what: ``{kind: {name: Entry}}``, filled by the ``register_*`` hooks.

Duplicate and unknown names are errors that list what is installed and how to get more.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from engram.distributions import install_hint, providing
from engram.errors import DuplicatePlugin, PluginError, PluginNotFound

# -- a factory named by its dotted path, "engram_openai.embedder:OpenAIEmbedder", imported
# when a part is first built: every command loads every plugin, so a plugin that registers a
# class object would import its heavy dependencies (LanceDB, Chroma, httpx) on every command.
_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True)
class Dotted:
    """``module:attribute``: calling it imports the module, looks the attribute up and calls it."""

    path: str

    def __post_init__(self) -> None:
        if not _PATH.match(self.path):
            raise PluginError(
                f"a plugin registers the factory {self.path!r}; a factory named by a string is "
                f'"package.module:Class" (a module path, a colon, a name in that module)'
            )

    @property
    def module(self) -> str:
        return self.path.partition(":")[0]

    def load(self) -> Any:
        """The named object; a path that names nothing is a ``PluginError`` naming the path."""
        module, _, attribute = self.path.partition(":")
        try:
            found: Any = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is None or not f"{module}.".startswith(f"{exc.name}."):
                raise  # the module exists; one of its own imports is missing
            raise PluginError(
                f"the factory {self.path!r} names a module that does not exist ({exc}); "
                f"check the path the plugin registers"
            ) from exc
        for name in attribute.split("."):
            try:
                found = getattr(found, name)
            except AttributeError:
                raise PluginError(
                    f"the factory {self.path!r} names {name!r}, which {module} does not "
                    f"define; check the path the plugin registers"
                ) from None
        return found

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.load()(*args, **kwargs)


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
