"""A factory named by its dotted path, ``"engram_openai.embedder:OpenAIEmbedder"``, imported when a
part is first built.

Every ``engram`` command loads every plugin, so a plugin that registers a class object imports its
heavy dependencies (LanceDB, Chroma, httpx) on every command. Registering the class's path instead
defers that import to the first build, with no hand-written lazy factory in each plugin.
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from engram.errors import PluginError

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
