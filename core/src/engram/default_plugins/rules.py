"""Registers the built-in ``rules`` extractor. Every command loads the default plugins, but only
capture extracts: the extractor (its patterns and the offline judge, tenths of a second to
import) is imported when one is built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engram.hookspecs import hookimpl
from engram.registry import NoOptions, Register

if TYPE_CHECKING:
    from engram.default_plugins.rules_extractor import RulesExtractor


def build_extractor(options: NoOptions | None = None) -> RulesExtractor:
    """The registered factory."""
    from engram.default_plugins.rules_extractor import RulesExtractor

    return RulesExtractor(options)


@hookimpl
def register_extractors(register: Register) -> None:
    """The built-in offline extractor."""
    register("rules", build_extractor)
