"""Typed filters (``engram.filters``) to SQL over the ``jsonb`` metadata column, every value,
field name and list bound as a parameter; only fixed SQL text is ever joined.

Each leaf is wrapped in ``COALESCE(..., false)``: SQL's NULL logic would otherwise make
``Not``/``Ne`` drop rows that lack the field, which the semantics count as matches. ``jsonb``
equality keeps type families apart (``true`` is not ``1``, ``"1"`` is not ``1``) and compares
numbers as ``numeric`` (``1 = 1.0``), exactly as ``engram.filters.same_value``. Ranges compare
``numeric`` with the bounds as exact decimal text; date ranges read ISO strings through the
schema's ``iso_time`` function (``schema.py``).

Known limit: a date string is an ISO date when it is ``YYYY-MM-DD``, optionally followed by
``T`` or a space, ``HH:MM[:SS[.ffffff]]`` and ``Z`` or an offset; rarer ISO forms that Python
also accepts (week dates, basic format without dashes) do not match a date range here.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from psycopg import sql

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
)
from engram_postgres.jsontext import enc, number_text

_FIELD = re.compile(FIELD_PATTERN)
_RANGE_OPS = {"gt": ">", "gte": ">=", "lt": "<", "lte": "<="}

Sql = tuple[sql.Composable, list[Any]]


def compile_filter(flt: Filter | None, schema: str, column: str = "c.metadata") -> Sql:
    """``(condition, params)`` for a WHERE clause; ``column`` is fixed text chosen by the store."""
    if flt is None:
        return sql.SQL("true"), []
    return _compile(flt, schema, sql.SQL(column))


def _compile(flt: Filter, schema: str, m: sql.Composable) -> Sql:
    if isinstance(flt, And | Or):
        parts = [_compile(f, schema, m) for f in flt.filters]
        joiner = sql.SQL(" AND " if isinstance(flt, And) else " OR ")
        joined = sql.SQL("(") + joiner.join(s for s, _ in parts) + sql.SQL(")")
        return joined, [p for _, ps in parts for p in ps]
    if isinstance(flt, Not):
        inner, params = _compile(flt.filter, schema, m)
        return sql.SQL("(NOT {})").format(inner), params
    field = _field(flt.field)
    if isinstance(flt, Eq):
        return _one_of(m, field, [flt.value])
    if isinstance(flt, Ne):
        inner, params = _one_of(m, field, [flt.value])
        return sql.SQL("(NOT {})").format(inner), params
    if isinstance(flt, In):
        return _one_of(m, field, list(flt.values))
    if isinstance(flt, Contains):
        return _contains(m, field, flt.value)
    if isinstance(flt, Range):
        return _range(m, field, flt, schema)
    raise FilterError(f"unknown filter {flt!r}; build filters with engram.filters")


def _field(name: str) -> str:
    if not isinstance(name, str) or not _FIELD.match(name):
        raise FilterError(
            f"bad metadata field name {name!r}: use letters, digits, '_' and '-', "
            "starting with a letter or '_'"
        )
    return name


def json_literal(value: Any) -> str | None:
    """A filter value as jsonb text (strings escaped as stored), or None for one no metadata
    can hold (NaN, ±inf)."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        return number_text(value)
    if isinstance(value, str):
        return json.dumps(enc(value), ensure_ascii=False)
    return None


def _one_of(m: sql.Composable, field: str, values: list[Any]) -> Sql:
    """The field equals one of ``values`` under filter equality (Eq and In)."""
    literals = [text for v in values if (text := json_literal(v)) is not None]
    if not literals:
        return sql.SQL("false"), []
    condition = sql.SQL("COALESCE(({} -> %s) = ANY(%s::jsonb[]), false)").format(m)
    return condition, [field, literals]


def _contains(m: sql.Composable, field: str, value: Any) -> Sql:
    literal = json_literal(value)
    if literal is None:
        return sql.SQL("false"), []
    condition = sql.SQL(
        "COALESCE(jsonb_typeof({m} -> %s) = 'array' AND ({m} -> %s) @> %s::jsonb, false)"
    ).format(m=m)
    return condition, [field, field, f"[{literal}]"]


def _range(m: sql.Composable, field: str, flt: Range, schema: str) -> Sql:
    """The subject (NULL unless a number, or an ISO date string, as the bounds ask) is computed
    once per row in a one-row subquery and compared with every bound."""
    tests: list[sql.Composable] = []
    bounds: list[Any] = []
    for op, bound in flt.bounds():
        if flt.is_date:
            tests.append(sql.SQL("x.s " + _RANGE_OPS[op] + " %s::timestamptz"))
            bounds.append(bound)
        else:
            tests.append(sql.SQL("x.s " + _RANGE_OPS[op] + " %s::numeric"))
            bounds.append(number_text(bound))  # type: ignore[arg-type]
    if flt.is_date:
        subject = sql.SQL(
            "CASE WHEN jsonb_typeof({m} -> %s) = 'string' THEN {iso}({m} ->> %s) END"
        ).format(m=m, iso=sql.Identifier(schema, "iso_time"))
    else:
        subject = sql.SQL(
            "CASE WHEN jsonb_typeof({m} -> %s) = 'number' THEN ({m} -> %s)::numeric END"
        ).format(m=m)
    condition = sql.SQL("COALESCE((SELECT {tests} FROM (SELECT {subject} AS s) AS x), false)")
    composed = condition.format(tests=sql.SQL(" AND ").join(tests), subject=subject)
    return composed, [*bounds, field, field]
