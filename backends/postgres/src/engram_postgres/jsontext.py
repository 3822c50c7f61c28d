"""Metadata as JSON text that survives ``jsonb`` with its types.

``jsonb`` keeps numbers as ``numeric``: ``1e+16`` comes back as ``10000000000000000``, which
Python reads as an int. Floats are therefore written in plain decimal with a fraction
(``10000000000000000.0``): numeric keeps the scale, so they come back as floats, exactly.
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any


def number_text(value: int | float) -> str:
    """An int as itself; a finite float as plain decimal text with a fraction."""
    if isinstance(value, int):
        return str(value)
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def dumps(value: Any) -> str:
    """JSON text for ``value`` (dicts, lists, strings, numbers, booleans, None)."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, dict):
        items = (f"{json.dumps(str(k), ensure_ascii=False)}:{dumps(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    raise TypeError(f"metadata value of type {type(value).__name__} is not JSON")


def has_nul(value: Any) -> bool:
    """Whether a NUL character hides anywhere in ``value``: PostgreSQL text and jsonb refuse it."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, dict):
        return any(has_nul(k) or has_nul(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(has_nul(v) for v in value)
    return False
