"""Registers the built-in ``rules`` extractor. Every command loads the default plugins, but only
capture extracts: the extractor (its patterns and the offline judge, tenths of a second to
import) is registered by its path, so it is imported when one is built."""

from __future__ import annotations

from engram.hookspecs import hookimpl
from engram.registry import Register


@hookimpl
def register_extractors(register: Register) -> None:
    """The built-in offline extractor."""
    register("rules", "engram.default_plugins.rules_extractor:RulesExtractor")
