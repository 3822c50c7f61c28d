"""YAML frontmatter: read into JSON-safe metadata, never raising; what cannot be read stays text
so nothing is lost, with a warning that says how to fix it."""

from __future__ import annotations

import base64
import datetime
import math
import warnings
from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import JsonValue

from engram.models import Metadata

_YAML_NODE_BUDGET = 10_000
# libyaml's parser when PyYAML has it (about 7x faster: recall reads every memory's
# frontmatter); input it refuses is read again by the pure-Python one, whose verdict stands.
_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_YAML_MAX_DEPTH = 64


class FrontmatterWarning(UserWarning):
    """Frontmatter that could not be read; the text is kept as body so nothing is lost."""


@dataclass(frozen=True, slots=True)
class Frontmatter:
    """Result of reading frontmatter. ``body`` is ``text[body_offset:]``."""

    metadata: Metadata
    body: str
    body_start_line: int
    body_offset: int
    warning: str | None = None


def _load_yaml(raw: str) -> Any:
    try:
        return yaml.load(raw, Loader=_FAST_LOADER)  # a safe loader: no arbitrary objects
    except (yaml.YAMLError, ValueError):  # ValueError: text libyaml cannot encode (surrogates)
        return yaml.safe_load(raw)


class _TooComplexError(ValueError):
    """YAML past the node or depth budget: read as body, like any unreadable frontmatter."""


def read_frontmatter(text: str) -> Frontmatter:
    """Split leading YAML frontmatter (between ``---`` lines) from the body, never raising.

    Malformed YAML is kept as body and described in ``warning``; YAML that is not a mapping is not
    frontmatter (the text is all body); an empty block is stripped with empty metadata.
    """
    start = 1 if text.startswith("\ufeff") else 0
    plain = Frontmatter({}, text[start:], 1, start)
    first_end = text.find("\n", start)
    if first_end < 0 or text[start:first_end].rstrip() != "---":
        return plain
    pos, line_no = first_end + 1, 2
    while True:
        end = text.find("\n", pos)
        line = text[pos:] if end < 0 else text[pos:end]
        if line.rstrip() in ("---", "..."):
            break
        if end < 0:
            return plain  # no closing delimiter: a thematic break, not frontmatter
        pos, line_no = end + 1, line_no + 1
    raw = text[first_end + 1 : pos]
    body_offset = len(text) if end < 0 else end + 1
    stripped = Frontmatter({}, text[body_offset:], line_no + 1, body_offset)
    if not raw.strip():
        return stripped
    try:
        loaded = _load_yaml(raw)
        if not isinstance(loaded, dict):
            return plain
        metadata = _json_mapping(loaded, [_YAML_NODE_BUDGET], 0)
    except (yaml.YAMLError, RecursionError, _TooComplexError) as exc:
        problem = str(exc).replace("\n", " ").strip() or type(exc).__name__
        message = (
            f"frontmatter (lines 1-{line_no}) is not valid YAML and was kept as text: {problem}; "
            "fix the YAML between the '---' lines to make it metadata"
        )
        return Frontmatter({}, text[start:], 1, start, message)
    return Frontmatter(metadata, stripped.body, stripped.body_start_line, body_offset)


def parse_frontmatter(text: str) -> tuple[Metadata, str, int]:
    """``(metadata, body, body_start_line)``; unreadable YAML emits a ``FrontmatterWarning``."""
    fm = read_frontmatter(text)
    if fm.warning:
        warnings.warn(fm.warning, FrontmatterWarning, stacklevel=2)
    return fm.metadata, fm.body, fm.body_start_line


def _json_mapping(value: dict[Any, Any], budget: list[int], depth: int) -> dict[str, JsonValue]:
    return {_json_key(k): _json_safe(v, budget, depth + 1) for k, v in value.items()}


def _json_key(key: Any) -> str:
    if isinstance(key, datetime.date | datetime.time):
        return key.isoformat()
    return key if isinstance(key, str) else str(key)


def _json_safe(value: Any, budget: list[int], depth: int) -> JsonValue:
    """YAML values → JSON values: dates become ISO strings, sets sorted lists, bytes base64."""
    budget[0] -= 1
    if budget[0] < 0 or depth > _YAML_MAX_DEPTH:
        raise _TooComplexError("frontmatter is too large or too deeply nested")
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else str(value)
    if isinstance(value, datetime.date | datetime.time):
        return value.isoformat()
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    if isinstance(value, dict):
        return _json_mapping(value, budget, depth)
    if isinstance(value, set | frozenset):
        return [_json_safe(v, budget, depth + 1) for v in sorted(value, key=str)]
    if isinstance(value, list | tuple):
        return [_json_safe(v, budget, depth + 1) for v in value]
    return str(value)
