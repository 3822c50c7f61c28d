"""Engram filters as Chroma ``where`` clauses: exact where Chroma agrees with engram's semantics,
a superset otherwise (the store then checks candidates with ``engram.filters.matches``).

Checked against Chroma 1.5 (``tests/test_chroma_where.py`` tests every claim on a real
collection): ``$eq``/``$ne``/``$in``/``$nin`` never equate booleans with numbers or strings;
``$ne``, ``$nin`` and ``$not_contains`` match records without the key, as engram's ``Ne`` and
``Not`` do; ranges see numbers only; ``$contains`` on an array is strict about the element type.
Numbers are stored and compared as floats (``records.number``): Chroma compares an int-valued
field with a float operand by truncating the operand.

What Chroma cannot say exactly becomes "no restriction" (``ALL``) with ``exact=False``: equality
with None, numbers of 2**53 or more (float rounding), and the negation of a range or of a
``Contains``. ``Contains`` itself is only a superset: Chroma 1.5 leaves the array metadata of a
deleted *collection* behind, and a record created later may inherit it (scalars are cleaned up),
so an array can hold extra values but never miss one of ours. ``Not`` is pushed down to the
leaves (De Morgan) so each leaf is translated in its own polarity; a leaf that has no exact
negation falls back to ``ALL``, so the result is always a superset. Field names are validated
again here, because a filter built with ``model_construct`` skips pydantic; values are passed to
Chroma as data, never spliced into text.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from engram import (
    FIELD_PATTERN,
    And,
    Contains,
    Eq,
    Filter,
    FilterError,
    In,
    Ne,
    Not,
    Or,
    Range,
    Scalar,
)
from engram_chroma.records import date_key, list_key, micros, number

EXACT_LIMIT = 2**53  # integers up to this magnitude are the same as int and as float
_FIELD = re.compile(FIELD_PATTERN)
Where = dict[str, Any]


@dataclass(frozen=True)
class Pushdown:
    """A ``where`` for Chroma (None: no restriction) and whether it matches exactly the filter."""

    where: Where | None
    exact: bool
    nothing: bool = False

    @property
    def everything(self) -> bool:
        return self.where is None and not self.nothing


ALL = Pushdown(None, exact=True)
SUPERSET = Pushdown(None, exact=False)
NOTHING = Pushdown(None, exact=True, nothing=True)


def translate(flt: Filter | None) -> Pushdown:
    """The pushdown for ``flt``; ``FilterError`` for a malformed filter."""
    if flt is None:
        return ALL
    return _translate(flt, negate=False)


def restrict(pushdown: Pushdown, clause: Where) -> Where:
    """``pushdown``'s where AND ``clause`` (for the store's own conditions)."""
    if pushdown.where is None:
        return clause
    return {"$and": [pushdown.where, clause]}


def _translate(flt: Filter, *, negate: bool) -> Pushdown:
    if isinstance(flt, And | Or):
        if not flt.filters:
            raise FilterError(f"{flt.op} needs at least one filter; give it a list of filters")
        parts = [_translate(f, negate=negate) for f in flt.filters]
        # De Morgan: under negation, AND becomes OR and OR becomes AND.
        return _all_of(parts) if isinstance(flt, And) != negate else _any_of(parts)
    if isinstance(flt, Not):
        return _translate(flt.filter, negate=not negate)
    if not isinstance(flt, Eq | Ne | In | Contains | Range):
        raise FilterError(f"unknown filter {flt!r}; build filters with engram.filters")
    field = flt.field
    if not isinstance(field, str) or not _FIELD.match(field) or len(field) > 128:
        raise FilterError(
            f"{field!r} is not a valid field name; use letters, digits, '_' and '-' "
            f"(starting with a letter or '_')"
        )
    if isinstance(flt, Eq | Ne):
        return _equality(field, flt.value, equal=isinstance(flt, Eq) != negate)
    if isinstance(flt, In):
        return _membership(field, flt.values, negate=negate)
    if isinstance(flt, Contains):
        return _contains(field, flt.value, negate=negate)
    return SUPERSET if negate else _range(flt)


def _equality(field: str, value: Scalar, *, equal: bool) -> Pushdown:
    """``Eq`` (equal=True) or ``Ne`` (equal=False) of one value."""
    if value is None:
        return SUPERSET
    if isinstance(value, float) and not math.isfinite(value):
        # Stored metadata is finite JSON: nothing equals NaN or infinity.
        return NOTHING if equal else ALL
    if _inexact_number(value):
        return SUPERSET
    return Pushdown({field: {"$eq" if equal else "$ne": _operand(value)}}, exact=True)


def _membership(field: str, values: list[Scalar], *, negate: bool) -> Pushdown:
    """``In`` (or ``Not(In)``): one ``$in``/``$nin`` per value type, as Chroma wants them."""
    groups: dict[type, list[Any]] = {}
    for value in values:
        if value is None or _inexact_number(value):
            return SUPERSET
        if isinstance(value, float) and not math.isfinite(value):
            continue
        groups.setdefault(type(_operand(value)), []).append(_operand(value))
    operator = "$nin" if negate else "$in"
    parts = [Pushdown({field: {operator: group}}, exact=True) for group in groups.values()]
    if not parts:
        return ALL if negate else NOTHING
    return _all_of(parts) if negate else _any_of(parts)


def _contains(field: str, value: str | int | float | bool, *, negate: bool) -> Pushdown:
    item: str | float | bool
    if isinstance(value, bool):
        key, item = list_key(field, "b"), value
    elif isinstance(value, str):
        key, item = list_key(field, "s"), value
    else:
        if isinstance(value, float) and not math.isfinite(value):
            return ALL if negate else NOTHING
        if _inexact_number(value):
            return SUPERSET
        key, item = list_key(field, "n"), float(value)
    if negate:
        return SUPERSET
    return Pushdown({key: {"$contains": item}}, exact=False)


def _range(flt: Range) -> Pushdown:
    key = date_key(flt.field) if flt.is_date else flt.field
    clauses: list[Where] = []
    exact = True
    for op, bound in flt.bounds():
        if flt.is_date:
            value: int | float = micros(bound)  # type: ignore[arg-type]
        elif _inexact_number(bound):
            exact = False  # a bound Chroma may round: leave it to the exact check
            continue
        else:
            value = number(bound)  # type: ignore[arg-type]
        clauses.append({key: {f"${op}": value}})
    if not clauses:
        return SUPERSET
    where = clauses[0] if len(clauses) == 1 else {"$and": clauses}
    return Pushdown(where, exact=exact)


def _operand(value: str | int | float | bool) -> str | float | bool:
    """Numbers are compared as floats, as they are stored (``records.number``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return number(value)
    return value


def _inexact_number(value: Any) -> bool:
    """A number Chroma may not compare exactly (it rounds some integers beyond 2**53)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return math.isfinite(value) and abs(value) >= EXACT_LIMIT


def _all_of(parts: list[Pushdown]) -> Pushdown:
    if any(p.nothing for p in parts):
        return NOTHING
    exact = all(p.exact for p in parts)
    wheres = [p.where for p in parts if p.where is not None]
    if not wheres:
        return Pushdown(None, exact=exact)
    return Pushdown(wheres[0] if len(wheres) == 1 else {"$and": wheres}, exact=exact)


def _any_of(parts: list[Pushdown]) -> Pushdown:
    if any(p.everything and p.exact for p in parts):
        return ALL
    if any(p.everything for p in parts):
        return SUPERSET
    kept = [p for p in parts if not p.nothing]
    if not kept:
        return NOTHING
    exact = all(p.exact for p in kept)
    wheres = [p.where for p in kept if p.where is not None]
    return Pushdown(wheres[0] if len(wheres) == 1 else {"$or": wheres}, exact=exact)
