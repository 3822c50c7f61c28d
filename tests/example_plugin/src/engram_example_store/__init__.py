"""An engram plugin in one file: a store named "example", an extractor named "example-keywords",
and a SQL function ``example_reverse(text)`` on every connection an engram-sqlite store opens.

engram loads this module through the entry point in pyproject.toml and calls its hookimpls;
each ``register(name, factory, options=Model)`` call makes a part selectable by name in config.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from engram import (
    ExtractedMemory,
    MemoryStore,
    MemoryStoreOptions,
    MemoryType,
    Message,
    Register,
    hookimpl,
)


class ExampleOptions(BaseModel):
    """The keys allowed in ``[store]`` besides ``backend``; anything else is a config error."""

    model_config = ConfigDict(extra="forbid")
    label: str = "example"


class ExampleStore(MemoryStore):
    """The reference in-memory store, plus a label: a real backend would open its database here."""

    def __init__(self, options: ExampleOptions) -> None:
        super().__init__(MemoryStoreOptions())
        self.label = options.label


class KeywordExtractor:
    """Rule-based: a line starting with one of ``RULES``' prefixes becomes a typed memory."""

    name = "example-keywords"
    RULES: tuple[tuple[str, MemoryType], ...] = (
        ("I prefer", "preference"),
        ("We decided", "decision"),
    )

    def __init__(self, options: BaseModel | None = None) -> None:
        self.options = options

    def extract(
        self, messages: Sequence[Message], mode: Literal["normal", "summary", "init"] = "normal"
    ) -> list[ExtractedMemory]:
        lines = (line.strip() for m in messages for line in m.content.splitlines())
        return [
            ExtractedMemory(type=kind, content=line, tags=["example"])
            for line in lines
            for prefix, kind in self.RULES
            if line.startswith(prefix)
        ]


@hookimpl
def register_stores(register: Register) -> None:
    register("example", ExampleStore, options=ExampleOptions)


@hookimpl
def register_extractors(register: Register) -> None:
    register("example-keywords", KeywordExtractor)


@hookimpl(optionalhook=True)
def prepare_connection(conn: Any) -> None:
    """engram-sqlite's own hook; optional, so this plugin also loads where that is not installed."""
    conn.create_function("example_reverse", 1, lambda s: None if s is None else s[::-1])
