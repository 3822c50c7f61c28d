"""LlamaIndex ``MetadataFilters`` → engram's typed filters.

Each operator maps onto the filter semantics written down in ``engram.filters``, so the three
stores agree with LlamaIndex's own reference (``build_metadata_filter_fn`` of ``SimpleVectorStore``)
wherever the two define the same thing:

- ``EQ``/``NE`` → ``Eq``/``Ne`` (a node without the key matches ``NE``, as in LlamaIndex);
- ``GT``/``GTE``/``LT``/``LTE`` → ``Range`` (numbers, or ISO dates held as strings);
- ``IN`` → ``In``; ``NIN`` → ``Not(In)`` (a node without the key matches, as in LlamaIndex);
- ``CONTAINS`` → ``Contains`` (the field is a list holding the value);
- ``ANY``/``ALL`` → ``Or``/``And`` of ``Contains``, one per value;
- conditions ``AND``/``OR`` → ``And``/``Or``; ``NOT`` → ``Not(Or(...))``: a node matches when
  none of the filters do, LlamaIndex's definition.

``TEXT_MATCH``, ``TEXT_MATCH_INSENSITIVE`` and ``IS_EMPTY`` have no engram counterpart (engram's
filters compare whole values; substring match and "missing or empty" are not defined), so they
are an ``UnsupportedFilter`` naming the operator instead of a silently different answer.
"""

from __future__ import annotations

from typing import Any

from llama_index.core.vector_stores.types import (
    FilterCondition,
    FilterOperator,
    MetadataFilter,
    MetadataFilters,
)
from pydantic import ValidationError

from engram import And, Contains, Eq, Filter, FilterError, In, Ne, Not, Or, Range

__all__ = ["SUPPORTED_OPERATORS", "UnsupportedFilter", "to_engram_filter"]

_RANGES = {
    FilterOperator.GT: "gt",
    FilterOperator.GTE: "gte",
    FilterOperator.LT: "lt",
    FilterOperator.LTE: "lte",
}
SUPPORTED_OPERATORS = (
    FilterOperator.EQ,
    FilterOperator.NE,
    *_RANGES,
    FilterOperator.IN,
    FilterOperator.NIN,
    FilterOperator.CONTAINS,
    FilterOperator.ANY,
    FilterOperator.ALL,
)


class UnsupportedFilter(FilterError, ValueError):
    """A LlamaIndex filter engram cannot express: the message names the operator or key."""


def to_engram_filter(filters: MetadataFilters | None) -> Filter | None:
    """The engram filter equivalent to ``filters``; ``None`` when there is nothing to filter."""
    if filters is None or not filters.filters:
        return None
    parts = [_one(f) for f in filters.filters]
    condition = filters.condition or FilterCondition.AND
    if condition == FilterCondition.AND:
        return parts[0] if len(parts) == 1 else And(filters=parts)
    if condition == FilterCondition.OR:
        return parts[0] if len(parts) == 1 else Or(filters=parts)
    if condition == FilterCondition.NOT:
        return Not(filter=parts[0] if len(parts) == 1 else Or(filters=parts))
    raise UnsupportedFilter(f"filter condition {condition!r} is not supported; use and, or, not")


def _one(item: MetadataFilter | MetadataFilters) -> Filter:
    if isinstance(item, MetadataFilters):
        nested = to_engram_filter(item)
        if nested is None:
            raise UnsupportedFilter("a nested MetadataFilters has no filters; remove it")
        return nested
    try:
        return _operator(item)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise UnsupportedFilter(
            f"filter {item.key!r} {item.operator.name} {item.value!r} cannot be expressed: "
            f"{problem}. Metadata keys must match [A-Za-z_][A-Za-z0-9_-]*, comparisons need "
            f"numbers or ISO dates, and IN/NIN/ANY/ALL need a list"
        ) from None


def _operator(item: MetadataFilter) -> Filter:
    op, key, value = item.operator, item.key, item.value
    if op == FilterOperator.EQ:
        return Eq(field=key, value=_scalar(item))
    if op == FilterOperator.NE:
        return Ne(field=key, value=_scalar(item))
    if op in _RANGES:
        return Range.model_validate({"field": key, _RANGES[op]: value})
    if op == FilterOperator.IN:
        return In(field=key, values=_values(item))
    if op == FilterOperator.NIN:
        return Not(filter=In(field=key, values=_values(item)))
    if op == FilterOperator.CONTAINS:
        return Contains(field=key, value=_scalar(item))
    if op in (FilterOperator.ANY, FilterOperator.ALL):
        holds: list[Filter] = [Contains(field=key, value=v) for v in _values(item)]
        if not holds:
            raise UnsupportedFilter(f"filter {key!r} {op.name} needs at least one value")
        return Or(filters=holds) if op == FilterOperator.ANY else And(filters=holds)
    supported = ", ".join(o.name for o in SUPPORTED_OPERATORS)
    raise UnsupportedFilter(
        f"filter operator {op.name} ({op.value!r}) on {key!r} is not supported by engram; "
        f"supported operators: {supported}"
    )


def _scalar(item: MetadataFilter) -> Any:
    if isinstance(item.value, list):
        raise UnsupportedFilter(
            f"filter {item.key!r} {item.operator.name} takes one value, got the list "
            f"{item.value!r}; use IN for one of several values"
        )
    return item.value


def _values(item: MetadataFilter) -> list[Any]:
    if not isinstance(item.value, list):
        raise UnsupportedFilter(
            f"filter {item.key!r} {item.operator.name} takes a list of values, got "
            f"{item.value!r}; write value=[{item.value!r}]"
        )
    return list(item.value)
