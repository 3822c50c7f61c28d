"""Building the configured plugins: the store, embedder, extractor and searcher a config names,
looked up in the registry and given their validated options. It sits above both the config
(which only reads settings) and the registry (which only lists plugins)."""

from __future__ import annotations

from typing import Any

from engram.config import EngramConfig, plugin_options
from engram.errors import ConfigError
from engram.registry import Registry


def build_part(config: EngramConfig, registry: Registry, kind: str) -> Any:
    """Pick a plugin by name from the config, validate its options, build it."""
    if kind == "store":
        name, raw, section = config.store.backend, config.store.options(), "store"
        options = plugin_options(config, registry, "store", name, raw, section)
        return registry.get("store", name).build(options)
    if kind == "embedder":
        name, raw = config.embedder.provider, config.embedder.options()
        options = plugin_options(config, registry, "embedder", name, raw, "embedder")
        return registry.get("embedder", name).build(options)
    if kind == "extractor":
        name, raw = config.extractor.provider, config.extractor.options()
        options = plugin_options(config, registry, "extractor", name, raw, "extractor")
        return registry.get("extractor", name).build(options)
    if kind == "searcher":
        entry = registry.get("searcher", config.search.searcher)
        return entry.build(config.search)
    raise ConfigError(f"unknown part kind {kind!r}")
