"""LangChain-style metadata filters (the dict language most vector stores accept) as engram
filters, which every engram store translates with bound parameters, never by splicing text.

``{"team": "db"}`` is equality; ``{"n": {"$gte": 2}}`` an operator; several keys are all
required; ``$and``, ``$or`` (lists) and ``$not`` (one filter) combine. An engram ``Filter`` is
taken as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pydantic import ValidationError

from engram import FIELD_PATTERN, And, Contains, Eq, Filter, In, Ne, Not, Or, Range

FilterLike = Filter | Mapping[str, Any] | None

_FIELD_OPS: dict[str, Callable[[str, Any], Filter]] = {
    "$eq": lambda f, v: Eq(field=f, value=v),
    "$ne": lambda f, v: Ne(field=f, value=v),
    "$in": lambda f, v: In(field=f, values=_listed(f, "$in", v)),
    "$nin": lambda f, v: Not(filter=In(field=f, values=_listed(f, "$nin", v))),
    "$gt": lambda f, v: Range(field=f, gt=v),
    "$gte": lambda f, v: Range(field=f, gte=v),
    "$lt": lambda f, v: Range(field=f, lt=v),
    "$lte": lambda f, v: Range(field=f, lte=v),
    "$contains": lambda f, v: Contains(field=f, value=v),
}
_LOGIC = ("$and", "$or", "$not")
SUPPORTED = ", ".join([*_FIELD_OPS, *_LOGIC])


def to_filter(flt: FilterLike) -> Filter | None:
    """The engram filter for a LangChain filter (None for none)."""
    if flt is None or isinstance(flt, Eq | Ne | In | Contains | Range | And | Or | Not):
        return flt
    if not isinstance(flt, Mapping):
        raise ValueError(f"a filter is a dict or an engram Filter, got {type(flt).__name__}")
    parts = [_clause(key, value) for key, value in flt.items()]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(filters=parts)


def _clause(key: str, value: Any) -> Filter:
    if key in ("$and", "$or"):
        if not isinstance(value, list) or not value:
            raise ValueError(f"{key} takes a non-empty list of filters, got {value!r}")
        parts = [_required(to_filter(item)) for item in value]
        return And(filters=parts) if key == "$and" else Or(filters=parts)
    if key == "$not":
        return Not(filter=_required(to_filter(value)))
    if key.startswith("$"):
        raise ValueError(f"unknown filter operator {key!r}; supported: {SUPPORTED}")
    if not isinstance(value, Mapping):
        return _operator(key, "$eq", value)
    parts = [_operator(key, op, operand) for op, operand in value.items()]
    if not parts:
        raise ValueError(f"the filter on {key!r} names no operator; supported: {SUPPORTED}")
    return parts[0] if len(parts) == 1 else And(filters=parts)


def _operator(field: str, op: str, operand: Any) -> Filter:
    make = _FIELD_OPS.get(op)
    if make is None:
        raise ValueError(
            f"unknown filter operator {op!r} on {field!r}; supported: {', '.join(_FIELD_OPS)}"
        )
    try:
        return make(field, operand)
    except ValidationError as exc:  # engram's own check of the key or the operand
        raise ValueError(
            f"cannot filter {field!r} with {op} {operand!r}: {_why(op, exc)}"
        ) from None


def _why(op: str, exc: ValidationError) -> str:
    first = exc.errors()[0]
    if first["loc"] and first["loc"][0] == "field":
        return f"filterable metadata keys match {FIELD_PATTERN}"
    if first["type"] == "value_error":
        return str(first["msg"]).removeprefix("Value error, ")
    return f"{op} takes {_OPERANDS.get(op, 'a string, number, boolean or null')}"


_OPERANDS = {
    **dict.fromkeys(("$gt", "$gte", "$lt", "$lte"), "a number or an ISO date"),
    **dict.fromkeys(("$in", "$nin"), "a list of strings, numbers, booleans or nulls"),
    "$contains": "a string, number or boolean",
}


def _listed(field: str, op: str, value: Any) -> list[Any]:
    if not isinstance(value, list | tuple):
        raise ValueError(f"{op} on {field!r} takes a list, got {value!r}")
    return list(value)


def _required(flt: Filter | None) -> Filter:
    if flt is None:
        raise ValueError("an empty filter cannot be combined with $and, $or or $not")
    return flt
