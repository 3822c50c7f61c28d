"""Typed filters → a LanceDB (DataFusion SQL) where-clause over the columns of ``facts.py``.

Exact by construction, never widened:

- ``eq``/``ne``/``in``/``contains`` test digests in ``facts`` (``array_has``), so ``1 == 1.0``
  and ``True != 1`` hold exactly as in ``engram.filters.matches``; ``ne`` is ``NOT eq`` and so
  matches documents without the field.
- ``range`` reads the field from the typed key/value lists; bounds are turned into integer
  thresholds in Python (floor/ceil for integers, the nearest representable double for floats,
  microseconds for dates), so no float literal is ever parsed by the database.
- Every atom is two-valued (missing values are ``coalesce``-d to false), so ``NOT`` is exact.

The only literals in a clause are hex digests, field names that match ``FIELD_PATTERN`` and
integers; each is checked before it is written, and anything else is a ``FilterError``.
"""

from __future__ import annotations

import math
import operator
import re
from collections.abc import Callable
from datetime import date

from engram import And, Contains, Eq, Filter, FilterError, In, Ne, Not, Or, Range, to_utc
from engram_lancedb.facts import (
    INT64_MAX,
    INT64_MIN,
    canonical,
    digest,
    filterable,
    float_key,
    microseconds,
    nearest_float,
)

_HEX = re.compile(r"^[0-9a-f]{32}$")
Number = int | float


def compile_filter(flt: Filter | None) -> str | None:
    """The where-clause selecting exactly the chunks ``flt`` matches (None: no filter)."""
    if flt is None:
        return None
    return _clause(flt)


def _clause(flt: Filter) -> str:
    if isinstance(flt, And):
        return "(" + " AND ".join(_clause(f) for f in _parts(flt.filters)) + ")"
    if isinstance(flt, Or):
        return "(" + " OR ".join(_clause(f) for f in _parts(flt.filters)) + ")"
    if isinstance(flt, Not):
        return f"(NOT {_clause(flt.filter)})"
    if isinstance(flt, Eq):
        return _has("eq", _field(flt.field), _form(flt.value))
    if isinstance(flt, Ne):
        return f"(NOT {_has('eq', _field(flt.field), _form(flt.value))})"
    if isinstance(flt, In):
        return _in(_field(flt.field), flt.values)
    if isinstance(flt, Contains):
        if flt.value is None:
            raise FilterError("contains needs a value (a string, number or boolean), got null")
        return _has("has", _field(flt.field), _form(flt.value))
    if isinstance(flt, Range):
        return _range(_field(flt.field), flt)
    raise FilterError(
        f"unknown filter {flt!r}; build filters with engram.filters (Eq, Ne, In, Contains, "
        f"Range, And, Or, Not) or parse_filter()"
    )


def _parts(filters: object) -> list[Filter]:
    if not isinstance(filters, list) or not filters:
        raise FilterError("and/or need a non-empty list of filters")
    return filters


def _field(name: object) -> str:
    """A field name that may be written into the clause, or ``FilterError``."""
    if not isinstance(name, str) or not filterable(name):
        raise FilterError(
            f"invalid field name {name!r}: use letters, digits, '_' and '-' "
            f"(starting with a letter or '_'), at most 128 characters"
        )
    return name


def _form(value: object) -> str:
    if isinstance(value, list | dict) or (value is not None and canonical(value) is None):
        raise FilterError(
            f"a filter value must be a string, number, boolean or null, got {value!r}"
        )
    form = canonical(value)
    assert form is not None
    return form


def _hex(text: str) -> str:
    if not _HEX.match(text):
        raise FilterError(f"internal error: {text!r} is not a digest")
    return f"'{text}'"


def _name(name: str) -> str:
    return f"'{_field(name)}'"


def _int(value: int) -> str:
    if not INT64_MIN < value <= INT64_MAX:
        raise FilterError(f"internal error: {value} is outside the int64 literal range")
    return str(value)


def _has(kind: str, name: str, form: str) -> str:
    return f"array_has(facts, {_hex(digest(kind, name, form))})"


def _in(name: str, values: object) -> str:
    if not isinstance(values, list):
        raise FilterError(f"`in` needs a list of values, got {values!r}")
    digests = sorted({digest("eq", name, _form(v)) for v in values})
    if not digests:
        return "false"
    return f"array_has_any(facts, make_array({', '.join(_hex(d) for d in digests)}))"


# -- ranges -----------------------------------------------------------------------------------


def _range(name: str, flt: Range) -> str:
    raw = [(op, getattr(flt, op)) for op in ("gt", "gte", "lt", "lte")]
    bounds = [(op, b) for op, b in raw if b is not None]
    if not bounds:
        raise FilterError("a range needs at least one of gt, gte, lt, lte")
    if all(isinstance(b, date) for _, b in bounds):
        return _date_range(name, [(op, microseconds(to_utc(b))) for op, b in bounds])
    if not all(_is_number(b) for _, b in bounds):
        raise FilterError(
            f"range bounds on {name!r} must be all numbers or all ISO dates, got "
            f"{[b for _, b in bounds]!r}"
        )
    numbers: list[tuple[str, Number]] = [(op, b) for op, b in bounds]
    return f"({_int_range(name, numbers)} OR {_float_range(name, numbers)})"


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return not (isinstance(value, float) and not math.isfinite(value))


def _value(kind: str, name: str) -> str:
    return f"array_element({kind}_vals, CAST(array_position({kind}_keys, {_name(name)}) AS BIGINT))"


def _between(kind: str, name: str, low: int | None, high: int | None) -> str:
    """``low <= value <= high`` for field ``name`` in the ``kind`` lists; None is unbounded.
    Bounds are within int64 (callers clamp), so the literals are exact."""
    if low is not None and high is not None and low > high:
        return "false"
    tests = []
    if low is not None and low > INT64_MIN:
        tests.append(f"{_value(kind, name)} >= {_int(low)}")
    if high is not None and high < INT64_MAX:
        tests.append(
            f"{_value(kind, name)} <= {_int(high)}"
            if high > INT64_MIN
            else f"{_value(kind, name)} < {_int(INT64_MIN + 1)}"
        )
    if not tests:
        return f"array_has({kind}_keys, {_name(name)})"
    return f"coalesce({' AND '.join(tests)}, false)"


def _int_range(name: str, bounds: list[tuple[str, Number]]) -> str:
    """Integer fields: each bound becomes an integer threshold (``> 2.5`` is ``>= 3``)."""
    lows = [math.floor(b) + 1 for op, b in bounds if op == "gt"]
    lows += [math.ceil(b) for op, b in bounds if op == "gte"]
    highs = [math.ceil(b) - 1 for op, b in bounds if op == "lt"]
    highs += [math.floor(b) for op, b in bounds if op == "lte"]
    low, high = max(lows, default=None), min(highs, default=None)
    if (low is not None and low > INT64_MAX) or (high is not None and high < INT64_MIN):
        return "false"
    return _between("int", name, low, high)


def _float_range(name: str, bounds: list[tuple[str, Number]]) -> str:
    """Float fields: each bound becomes the nearest double on the right side of it, compared
    through the order-preserving int64 keys."""
    lows = [float_key(_double(b, op)) for op, b in bounds if op in ("gt", "gte")]
    highs = [float_key(_double(b, op)) for op, b in bounds if op in ("lt", "lte")]
    return _between("float", name, max(lows, default=None), min(highs, default=None))


_TESTS: dict[str, Callable[[float, Number], bool]] = {
    "gt": operator.gt,
    "gte": operator.ge,
    "lt": operator.lt,
    "lte": operator.le,
}


def _double(bound: Number, op: str) -> float:
    """The double closest to ``bound`` that passes ``op`` against it: the smallest such for a
    lower bound, the largest for an upper one. Python compares int and float exactly."""
    test = _TESTS[op]
    up = op in ("gt", "gte")
    outward, inward = (math.inf, -math.inf) if up else (-math.inf, math.inf)
    candidate = nearest_float(bound)
    while not test(candidate, bound):  # a step or two at most: the nearest double is adjacent
        candidate = math.nextafter(candidate, outward)
    while True:
        closer = math.nextafter(candidate, inward)
        if closer == candidate or not test(closer, bound):
            return candidate
        candidate = closer


def _date_range(name: str, bounds: list[tuple[str, int]]) -> str:
    lows = [b + 1 for op, b in bounds if op == "gt"] + [b for op, b in bounds if op == "gte"]
    highs = [b - 1 for op, b in bounds if op == "lt"] + [b for op, b in bounds if op == "lte"]
    return _between("date", name, max(lows, default=None), min(highs, default=None))
