"""The shape of each task's JSON answer, for the providers that constrain output to a schema
(Anthropic's forced tool, Gemini's response schema).

Only the top level is fixed (the key the extractor reads, and that it holds a list or an
object): the items stay open objects, so a prompt that asks for more fields (the judge's slots)
gets them, and the extractor's own validation stays the one that drops bad items. An unknown
operation gets any object.
"""

from __future__ import annotations

from typing import Any

_OPEN_OBJECT: dict[str, Any] = {"type": "object", "additionalProperties": True}


def _one(key: str, value: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {key: value},
        "required": [key],
        "additionalProperties": True,
    }


SCHEMAS: dict[str, dict[str, Any]] = {
    "extract": _one("memories", {"type": "array", "items": _OPEN_OBJECT}),
    "contradict": _one("stale", {"type": "array", "items": {"type": "string"}}),
    "judge": _one("verdicts", {"type": "array", "items": _OPEN_OBJECT}),
    "condense": _one("learned_pattern", {"type": ["object", "null"], "additionalProperties": True}),
}


def answer_schema(operation: str) -> dict[str, Any]:
    """The JSON Schema of ``operation``'s answer (a fresh copy: SDKs may rewrite it)."""
    import copy

    return copy.deepcopy(SCHEMAS.get(operation, _OPEN_OBJECT))
