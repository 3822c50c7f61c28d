"""Metadata as columns LanceDB can filter on exactly, whatever JSON a chunk carries.

The metadata itself is kept as a JSON string (so it round-trips with its types). Next to it, for
every top-level field whose name a filter could use, the chunk gets:

- ``facts``: digests of "field equals value" and "list field holds value", with the value in a
  canonical form that follows ``engram.filters.same_value`` (``1`` and ``1.0`` share a form,
  ``True``, ``1`` and ``"1"`` do not). ``eq``/``ne``/``in``/``contains`` become ``array_has``
  over these. Digests keep the column small and mean no user text ever reaches a where-clause.
- ``int_keys``/``int_vals``: integer fields (int64), compared exactly with integer thresholds.
- ``float_keys``/``float_vals``: float fields as order-preserving int64 keys of their IEEE-754
  bits, so float ranges are exact integer comparisons too (integers beyond int64 land here).
- ``date_keys``/``date_vals``: string fields that parse as ISO dates/datetimes
  (``engram.filters.parse_iso``), as UTC microseconds since the epoch.
"""

from __future__ import annotations

import hashlib
import math
import re
import struct
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from engram import FIELD_PATTERN, parse_iso

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
MAX_FIELD_LENGTH = 128  # the longest field name a filter accepts

_FIELD = re.compile(FIELD_PATTERN)


def filterable(name: str) -> bool:
    """A field name a filter can refer to (and so the only kind a where-clause ever names)."""
    return len(name) <= MAX_FIELD_LENGTH and _FIELD.match(name) is not None


def canonical(value: Any) -> str | None:
    """The form equal values share under the filter semantics; None for lists and objects,
    which no scalar equals."""
    if value is None:
        return "z"
    if isinstance(value, bool):
        return "b1" if value else "b0"
    if isinstance(value, int):
        return f"n{value}"
    if isinstance(value, float):
        if math.isfinite(value) and value.is_integer():
            return f"n{int(value)}"
        return f"n{value!r}"
    if isinstance(value, str):
        return f"s{value}"
    return None


def digest(kind: str, name: str, form: str) -> str:
    """The fact ``kind`` ("eq" or "has") about field ``name`` with canonical value ``form``."""
    data = f"{kind}\x00{name}\x00{form}".encode("utf-8", "surrogatepass")
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def float_key(value: float) -> int:
    """An int64 that sorts like ``value`` (IEEE-754 bits, negatives flipped; -0.0 is 0.0)."""
    if value == 0.0:
        value = 0.0
    (bits,) = struct.unpack(">q", struct.pack(">d", value))
    return int(bits) if bits >= 0 else int(bits) ^ INT64_MAX


def nearest_float(value: int | float) -> float:
    """``float(value)``, with integers beyond the float range as infinities (still ordered)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def microseconds(moment: datetime) -> int:
    """An aware datetime as whole microseconds since the epoch (exact: datetimes hold µs)."""
    delta = moment - EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@dataclass
class Facts:
    """The filter columns of one chunk."""

    facts: list[str] = field(default_factory=list)
    int_keys: list[str] = field(default_factory=list)
    int_vals: list[int] = field(default_factory=list)
    float_keys: list[str] = field(default_factory=list)
    float_vals: list[int] = field(default_factory=list)
    date_keys: list[str] = field(default_factory=list)
    date_vals: list[int] = field(default_factory=list)


def facts_of(metadata: dict[str, Any]) -> Facts:
    """Every filter column of a chunk, from its (validated, finite) metadata."""
    out = Facts()
    for name, value in metadata.items():
        if not filterable(name):
            continue
        form = canonical(value)
        if form is not None:
            out.facts.append(digest("eq", name, form))
        if isinstance(value, list):
            held = {form for form in map(canonical, value) if form is not None}
            out.facts.extend(digest("has", name, f) for f in sorted(held))
        elif isinstance(value, int) and not isinstance(value, bool):
            if INT64_MIN <= value <= INT64_MAX:
                out.int_keys.append(name)
                out.int_vals.append(value)
            else:
                out.float_keys.append(name)
                out.float_vals.append(float_key(nearest_float(value)))
        elif isinstance(value, float):
            out.float_keys.append(name)
            out.float_vals.append(float_key(value))
        elif isinstance(value, str):
            moment = parse_iso(value)
            if moment is not None:
                out.date_keys.append(name)
                out.date_vals.append(microseconds(moment))
    return out
