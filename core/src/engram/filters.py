"""Typed metadata filters and the one written-down semantics every backend must follow.

Semantics (the conformance suite enforces them on every store):

- ``Eq(field, v)``: the field exists and equals ``v`` (same type family: ``1 == 1.0``, but
  ``True != 1`` and ``"1" != 1``). A list value is compared as a whole, not by membership.
- ``Ne(field, v)``: the negation of ``Eq``; a document *without* the field matches.
- ``In(field, values)``: the field exists and equals one of ``values`` (empty ``values`` matches
  nothing).
- ``Contains(field, v)``: the field is a list that holds ``v``.
- ``Range(field, gt/gte/lt/lte)``: bounds are numbers or ISO dates/datetimes. A number bound
  matches numeric fields only (booleans are not numbers); a date bound matches string fields that
  parse as ISO dates/datetimes. Anything else, or a missing field, does not match.
  A string bound that is not an ISO date is a ``FilterError``.
- ``And``, ``Or``, ``Not``: the usual logic; ``Not(f)`` matches exactly where ``f`` does not.
- Field names are ``[A-Za-z_][A-Za-z0-9_-]*`` so backends can quote them safely.

Filters are data, never strings: backends translate them with bound parameters or validated
literals, so no user text is ever spliced into SQL or a where-clause.
"""

from __future__ import annotations

import math
from datetime import UTC, date, datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationError,
    field_validator,
    model_validator,
)

from engram.errors import FilterError

FIELD_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
Scalar = str | int | float | bool | None
Bound = int | float | datetime | date


class _Op(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class _FieldOp(_Op):
    field: Annotated[str, Field(pattern=FIELD_PATTERN, max_length=128)]


class Eq(_FieldOp):
    op: Literal["eq"] = "eq"
    value: Scalar


class Ne(_FieldOp):
    op: Literal["ne"] = "ne"
    value: Scalar


class In(_FieldOp):
    op: Literal["in"] = "in"
    values: list[Scalar]


class Contains(_FieldOp):
    op: Literal["contains"] = "contains"
    value: str | int | float | bool


class Range(_FieldOp):
    op: Literal["range"] = "range"
    gt: Bound | None = None
    gte: Bound | None = None
    lt: Bound | None = None
    lte: Bound | None = None

    @field_validator("gt", "gte", "lt", "lte", mode="before")
    @classmethod
    def _no_bool_or_free_text(cls, v: Any) -> Any:
        if isinstance(v, bool):
            raise ValueError("a range bound cannot be a boolean")
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError("a range bound must be finite")
        if isinstance(v, str):
            parsed = parse_iso(v)
            if parsed is None:
                raise ValueError(
                    f"{v!r} is neither a number nor an ISO date; ranges on text are not defined"
                )
            return parsed
        return v

    @model_validator(mode="after")
    def _consistent_bounds(self) -> Range:
        bounds = [b for b in (self.gt, self.gte, self.lt, self.lte) if b is not None]
        if not bounds:
            raise ValueError("a range needs at least one of gt, gte, lt, lte")
        kinds = {"date" if isinstance(b, date) else "number" for b in bounds}
        if len(kinds) > 1:
            raise ValueError("a range mixes number and date bounds")
        return self

    @property
    def is_date(self) -> bool:
        return any(isinstance(b, date) for b in (self.gt, self.gte, self.lt, self.lte))

    def bounds(self) -> list[tuple[str, Bound]]:
        """(operator, bound) pairs that are set, dates normalised to aware UTC datetimes."""
        out: list[tuple[str, Bound]] = []
        for name in ("gt", "gte", "lt", "lte"):
            b = getattr(self, name)
            if b is not None:
                out.append((name, to_utc(b) if isinstance(b, date) else b))
        return out


class And(_Op):
    op: Literal["and"] = "and"
    filters: list[Filter] = Field(min_length=1)


class Or(_Op):
    op: Literal["or"] = "or"
    filters: list[Filter] = Field(min_length=1)


class Not(_Op):
    op: Literal["not"] = "not"
    filter: Filter


Filter = Annotated[Eq | Ne | In | Contains | Range | And | Or | Not, Field(discriminator="op")]
for _model in (And, Or, Not):
    _model.model_rebuild()

_ADAPTER: TypeAdapter[Filter] = TypeAdapter(Filter)


FILTER_FORMS = (
    'a filter is {"field": value, ...} (each field equals its value; a list value means any of '
    'them) or {"op": "eq"|"ne"|"in"|"contains"|"range"|"and"|"or"|"not", ...}, e.g. '
    '{"op": "eq", "field": "type", "value": "decision"}'
)


def parse_filter(data: Any) -> Filter:
    """Validate a filter given as a dict (JSON, config, tool input); ``FilterError`` if bad.

    Besides the ``op`` form, a plain ``{"field": value}`` means equality (what people type
    first, and MongoDB-style stores take): every key must match; a list value means ``In``."""
    if isinstance(data, Eq | Ne | In | Contains | Range | And | Or | Not):
        return data
    if isinstance(data, dict) and data and "op" not in data:
        data = _equalities(data)
    try:
        return _ADAPTER.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "filter"
        raise FilterError(f"malformed filter at {where}: {first['msg']}; {FILTER_FORMS}") from None


def _equalities(fields: dict[str, Any]) -> dict[str, Any]:
    """``{"type": "note", "tags": ["a", "b"]}`` as the op form: an and of eq / in filters."""
    parts = [
        {"op": "in", "field": k, "values": v}
        if isinstance(v, list)
        else {"op": "eq", "field": k, "value": v}
        for k, v in fields.items()
    ]
    return parts[0] if len(parts) == 1 else {"op": "and", "filters": parts}


def where(**equals: Scalar) -> Filter | None:
    """Shorthand: ``where(type="decision", scope="work")`` is an ``And`` of ``Eq`` filters."""
    parts: list[Filter] = [Eq(field=k, value=v) for k, v in equals.items()]
    if not parts:
        return None
    return parts[0] if len(parts) == 1 else And(filters=parts)


def parse_iso(value: str) -> datetime | None:
    """An ISO-8601 date or datetime as an aware UTC datetime, or None if it is not one."""
    try:
        if len(value) == 10:
            return to_utc(date.fromisoformat(value))
        return to_utc(datetime.fromisoformat(value))
    except ValueError:
        return None


def to_utc(value: date) -> datetime:
    """Dates become midnight UTC; naive datetimes are taken as UTC."""
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def same_value(a: Any, b: Any) -> bool:
    """Equality as filters define it: numbers compare across int/float, nothing else mixes types."""
    if _is_number(a) and _is_number(b):
        return bool(a == b)
    if type(a) is not type(b):
        return False
    return bool(a == b)


_MISSING = object()


def matches(flt: Filter | None, metadata: dict[str, Any]) -> bool:
    """Evaluate a filter against one metadata dict: the reference semantics, used by the
    in-memory store and by tests that check other backends."""
    if flt is None:
        return True
    if isinstance(flt, And):
        return all(matches(f, metadata) for f in flt.filters)
    if isinstance(flt, Or):
        return any(matches(f, metadata) for f in flt.filters)
    if isinstance(flt, Not):
        return not matches(flt.filter, metadata)
    value = metadata.get(flt.field, _MISSING)
    if isinstance(flt, Eq):
        return value is not _MISSING and same_value(value, flt.value)
    if isinstance(flt, Ne):
        return value is _MISSING or not same_value(value, flt.value)
    if isinstance(flt, In):
        return value is not _MISSING and any(same_value(value, v) for v in flt.values)
    if isinstance(flt, Contains):
        return isinstance(value, list) and any(same_value(v, flt.value) for v in value)
    if isinstance(flt, Range):
        return _in_range(flt, value)
    raise FilterError(f"unknown filter {flt!r}")


def _in_range(flt: Range, value: Any) -> bool:
    if flt.is_date:
        if not isinstance(value, str):
            return False
        parsed = parse_iso(value)
        if parsed is None:
            return False
        subject: Any = parsed
    else:
        if not _is_number(value) or (isinstance(value, float) and math.isnan(value)):
            return False
        subject = value
    for op, bound in flt.bounds():
        if op == "gt" and not subject > bound:
            return False
        if op == "gte" and not subject >= bound:
            return False
        if op == "lt" and not subject < bound:
            return False
        if op == "lte" and not subject <= bound:
            return False
    return True
