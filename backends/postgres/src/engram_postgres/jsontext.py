"""Text and metadata as PostgreSQL keeps them, given back exactly.

- NUL: PostgreSQL ``text`` and ``jsonb`` cannot hold U+0000, yet any string is a valid engram id,
  text or metadata value. Strings are stored with U+0001 as an escape (U+0001 → U+0001 U+0001,
  U+0000 → U+0001 "0") and decoded on the way out: strings without either character, nearly
  all, are stored as they are.
- Numbers: ``jsonb`` keeps them as ``numeric``: ``1e+16`` comes back as ``10000000000000000``,
  which Python reads as an int. Floats are therefore written in plain decimal with a fraction
  (``10000000000000000.0``): numeric keeps the scale, so they come back as floats, exactly.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal
from typing import Any

ESC = "\x01"
_ESCAPED = re.compile("\x01(\x01|0)")


def enc(text: str) -> str:
    """``text`` as stored (NUL and the escape character escaped)."""
    if "\x00" not in text and ESC not in text:
        return text
    return text.replace(ESC, ESC + ESC).replace("\x00", ESC + "0")


def dec(text: str) -> str:
    """A stored string as it was given."""
    if ESC not in text:
        return text
    return _ESCAPED.sub(lambda m: "\x00" if m.group(1) == "0" else ESC, text)


def dec_value(value: Any) -> Any:
    """Loaded metadata with every string (keys included) decoded."""
    if isinstance(value, str):
        return dec(value)
    if isinstance(value, dict):
        return {dec(k): dec_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [dec_value(v) for v in value]
    return value


def number_text(value: int | float) -> str:
    """An int as itself; a finite float as plain decimal text with a fraction."""
    if isinstance(value, int):
        return str(value)
    text = format(Decimal(repr(value)), "f")
    return text if "." in text else text + ".0"


def dumps(value: Any) -> str:
    """JSON text for ``value`` (dicts, lists, strings, numbers, booleans, None)."""
    if isinstance(value, str):
        return json.dumps(enc(value), ensure_ascii=False)
    if isinstance(value, bool) or value is None:
        return json.dumps(value)
    if isinstance(value, int | float):
        return number_text(value)
    if isinstance(value, dict):
        items = (f"{dumps(str(k))}:{dumps(v)}" for k, v in value.items())
        return "{" + ",".join(items) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(dumps(v) for v in value) + "]"
    raise TypeError(f"metadata value of type {type(value).__name__} is not JSON")
