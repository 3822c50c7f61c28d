"""Typed filters (engram.filters) to SQL over the JSON ``metadata`` column, with bound parameters.

Every leaf is wrapped in ``COALESCE(..., 0)`` so it is 0 or 1, never NULL: SQL's three-valued
logic would otherwise make ``Not``/``Ne`` drop rows that lack the field, which the semantics
count as matches. ``json_type`` keeps type families apart (``true`` is not ``1``, ``"1"`` is not
``1``). Values, JSON paths and lists are all bound; only fixed SQL text is ever concatenated.

Numbers are read from their JSON text (``metadata -> path``) by the SQL function
``engram_json_number`` (Python's parser), because SQLite's own text-to-double conversion is off
by one unit in the last place for some values, which would make ``Eq``/``Range`` disagree with
the reference at the edges. Dates go through ``engram_iso_us`` the same way.

Known limit: integers beyond 64 bits (in metadata or in a filter) compare as doubles.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, date, datetime, timedelta
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
    parse_iso,
    to_utc,
)

ISO_FUNCTION = "engram_iso_us"
NUMBER_FUNCTION = "engram_json_number"
_FIELD = re.compile(FIELD_PATTERN)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_INT64 = (-(2**63), 2**63 - 1)
_NUMBER_START = frozenset("-0123456789")
_FRACTION = re.compile("[.eE]")
_RANGE_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

Sql = tuple[str, list[Any]]


def compile_filter(flt: Filter | None, column: str = "c.metadata") -> Sql:
    """``(sql, params)`` for a WHERE clause; ``column`` is fixed text chosen by the store."""
    if flt is None:
        return "1", []
    return _compile(flt, column)


def iso_microseconds(text: Any) -> int | None:
    """SQL function ``engram_iso_us``: a JSON string holding an ISO date/datetime as UTC
    microseconds, else NULL. It takes JSON text (``metadata -> path``), not the SQL string,
    because DB-API functions see text only up to its first NUL."""
    value = _json_value(text)
    if not isinstance(value, str):
        return None
    try:
        parsed = parse_iso(value)
    except (ValueError, OverflowError):
        return None
    return None if parsed is None else _microseconds(parsed)


def json_number(text: Any) -> int | float | None:
    """SQL function ``engram_json_number``: a JSON number's text as an exact int or float.

    JSON number syntax is a subset of Python's ``int``/``float`` literals, so those parse it
    exactly (and faster than ``json.loads``); anything else is NULL.
    """
    if not isinstance(text, str) or not text or text[0] not in _NUMBER_START:
        return None
    try:
        value: int | float = float(text) if _FRACTION.search(text) else int(text)
    except ValueError:
        return None
    return _finite(value)


def _json_value(text: Any) -> Any:
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def _compile(flt: Filter, m: str) -> Sql:
    if isinstance(flt, And | Or):
        parts = [_compile(f, m) for f in flt.filters]
        joiner = " AND " if isinstance(flt, And) else " OR "
        return "(" + joiner.join(s for s, _ in parts) + ")", [p for _, ps in parts for p in ps]
    if isinstance(flt, Not):
        sql, params = _compile(flt.filter, m)
        return f"(NOT {sql})", params
    path = _path(flt.field)
    if isinstance(flt, Eq):
        return _one_of(m, path, [flt.value])
    if isinstance(flt, Ne):
        sql, params = _one_of(m, path, [flt.value])
        return f"(NOT {sql})", params
    if isinstance(flt, In):
        return _one_of(m, path, list(flt.values))
    if isinstance(flt, Contains):
        return _contains(m, path, flt.value)
    if isinstance(flt, Range):
        return _range(m, path, flt)
    raise FilterError(f"unknown filter {flt!r}; build filters with engram.filters")


def _path(field: str) -> str:
    if not _FIELD.match(field):
        raise FilterError(
            f"bad metadata field name {field!r}: use letters, digits, '_' and '-', "
            "starting with a letter or '_'"
        )
    return f'$."{field}"'


def _one_of(m: str, path: str, values: list[Any]) -> Sql:
    """The field equals one of ``values`` under filter equality (Eq and In)."""
    clauses: list[str] = []
    params: list[Any] = []
    if any(v is None for v in values):
        clauses.append(f"json_type({m}, ?) = 'null'")
        params.append(path)
    for literal in ("true", "false"):
        if any(v is (literal == "true") for v in values):
            clauses.append(f"json_type({m}, ?) = '{literal}'")
            params.append(path)
    # NaN and infinities equal nothing: metadata cannot hold them.
    numbers = [n for v in values if _is_number(v) and (n := _finite(v)) is not None]
    if numbers:
        marks = ", ".join("?" for _ in numbers)
        clauses.append(f"{_number(m)} IN ({marks})")
        params += [path, path, path, *numbers]
    texts = [v for v in values if isinstance(v, str)]
    if texts:
        clauses.append(
            f"(json_type({m}, ?) = 'text' "
            f"AND json_extract({m}, ?) IN (SELECT value FROM json_each(?)))"
        )
        params += [path, path, json.dumps(texts)]
    if not clauses:
        return "0", []
    return "COALESCE(" + " OR ".join(clauses) + ", 0)", params


def _contains(m: str, path: str, value: str | int | float | bool) -> Sql:
    params: list[Any]
    if isinstance(value, bool):
        test, params = f"je.type = '{'true' if value else 'false'}'", []
    elif isinstance(value, str):
        test, params = "je.type = 'text' AND je.value = ?", [value]
    else:
        test = (
            f"(CASE je.type WHEN 'integer' THEN je.value "
            f"WHEN 'real' THEN {NUMBER_FUNCTION}({m} -> je.fullkey) END) = ?"
        )
        params = [_finite(value)]
    sql = (
        f"COALESCE(json_type({m}, ?) = 'array' "
        f"AND EXISTS (SELECT 1 FROM json_each({m}, ?) AS je WHERE {test}), 0)"
    )
    return sql, [path, path, *params]


def _range(m: str, path: str, flt: Range) -> Sql:
    """The subject (NULL unless a number, or an ISO date string, as the bounds ask) is computed
    once per row in a one-row subquery and compared with every bound."""
    tests: list[str] = []
    params: list[Any] = []
    for op, bound in flt.bounds():
        tests.append(f"x.s {_RANGE_OPS[op]} ?")
        params.append(_microseconds(to_utc(bound)) if isinstance(bound, date) else _bound(bound))
    if flt.is_date:
        subject, params = f"{ISO_FUNCTION}({m} -> ?)", [*params, path]
    else:
        subject, params = _number(m), [*params, path, path, path]
    sql = f"COALESCE((SELECT {' AND '.join(tests)} FROM (SELECT {subject} AS s) AS x), 0)"
    return sql, params


def _number(m: str) -> str:
    """The field as an exact number, NULL if it is not one (takes the JSON path three times).
    Integers are exact in SQLite; reals are parsed from their JSON text by Python."""
    return (
        f"(CASE json_type({m}, ?) WHEN 'integer' THEN json_extract({m}, ?) "
        f"WHEN 'real' THEN {NUMBER_FUNCTION}({m} -> ?) END)"
    )


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _finite(v: int | float) -> int | float | None:
    """A number SQLite can bind, or None for one no stored value can equal (NaN, ±inf, > 1e308).

    SQLite binds 64-bit integers only; larger ones are compared as doubles.
    """
    if isinstance(v, float):
        return v if math.isfinite(v) else None
    if _INT64[0] <= v <= _INT64[1]:
        return v
    try:
        return float(v)
    except OverflowError:
        return None


def _bound(v: int | float) -> int | float:
    """A range bound as a bindable number; integers beyond a double become ±infinity."""
    n = _finite(v)
    if n is None:
        return math.inf if v > 0 else -math.inf
    return n


def _microseconds(dt: datetime) -> int:
    return (dt - _EPOCH) // timedelta(microseconds=1)
