"""The configuration as a person may see it (``engram doctor``): every value shown, but those of
fields declared secret (pydantic ``SecretStr`` / ``SecretBytes``), which are masked.

Masking goes by declared type, not by name: ``max_tokens`` or ``api_key_env`` are settings to
show, ``api_key`` is a secret because its options model says so. A plugin section is shown
through the plugin's own options model (with its defaults filled in); options that model does
not accept have no declared type, so every one of their values is masked.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SecretBytes, SecretStr
from pydantic_core import to_jsonable_python

from engram.config import EngramConfig, plugin_options
from engram.errors import EngramError
from engram.registry import Kind, Registry

MASK = "***"
# The plugin sections, and the key in each that names the plugin.
PLUGIN_SECTIONS: dict[str, tuple[Kind, str]] = {
    "store": ("store", "backend"),
    "embedder": ("embedder", "provider"),
    "extractor": ("extractor", "provider"),
}


def config_view(config: EngramConfig, registry: Registry | None) -> dict[str, Any]:
    """``config`` as JSON-ready data with secrets masked; ``registry`` types the plugin
    sections (None: it could not be built, so their options are all masked)."""
    view: dict[str, Any] = {"root": str(config.root)}
    for name in type(config).model_fields:
        if name == "root":
            continue
        section = getattr(config, name)
        if name in PLUGIN_SECTIONS:
            view[name] = _plugin_section(config, registry, name, section)
        else:
            view[name] = masked(section)
    return view


def masked(value: Any) -> Any:
    """``value`` as JSON-ready data, every ``SecretStr`` / ``SecretBytes`` in it masked."""
    if isinstance(value, SecretStr | SecretBytes):
        return MASK if value.get_secret_value() else ""
    if isinstance(value, BaseModel):
        return {name: masked(v) for name, v in value}
    if isinstance(value, dict):
        return {str(k): masked(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [masked(v) for v in value]
    return to_jsonable_python(value)


def _plugin_section(
    config: EngramConfig, registry: Registry | None, section_name: str, section: BaseModel
) -> dict[str, Any]:
    kind, key = PLUGIN_SECTIONS[section_name]
    raw = dict(section.model_extra or {})
    chosen = section.model_dump(exclude=set(raw))  # {"backend": "sqlite"}
    if registry is None:
        return {**chosen, **dict.fromkeys(raw, MASK)}
    try:
        options = plugin_options(config, registry, kind, str(chosen[key]), raw, section_name)
    except EngramError:  # unknown plugin or options it rejects: no declared types to go by
        return {**chosen, **dict.fromkeys(raw, MASK)}
    return {**chosen, **masked(options)}
