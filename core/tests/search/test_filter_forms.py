"""What people type as a filter: plain ``{"field": value}`` means equality, the op form stays,
and anything else is one error that shows both forms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.errors import FilterError
from engram.filters import And, Eq, In, parse_filter

FIELDS = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True).filter(lambda f: f != "op")
SCALARS = st.one_of(st.text(max_size=20), st.integers(), st.booleans(), st.none())


def test_a_field_and_its_value_is_equality() -> None:
    assert parse_filter({"type": "note"}) == Eq(field="type", value="note")


def test_several_fields_must_all_match_and_a_list_means_any_of_them() -> None:
    got = parse_filter({"type": ["decision", "note"], "scope": "work"})
    assert got == And(
        filters=[In(field="type", values=["decision", "note"]), Eq(field="scope", value="work")]
    )


@given(st.dictionaries(FIELDS, SCALARS, min_size=1, max_size=4))
def test_the_shorthand_means_the_same_as_its_op_form(fields: dict[str, object]) -> None:
    parts = [{"op": "eq", "field": k, "value": v} for k, v in fields.items()]
    long = parts[0] if len(parts) == 1 else {"op": "and", "filters": parts}
    assert parse_filter(fields) == parse_filter(long)


@pytest.mark.parametrize("bad", [{"op": "eq"}, [1], {"type": {"nested": 1}}, {}])
def test_a_malformed_filter_names_both_forms(bad: object) -> None:
    with pytest.raises(FilterError) as info:
        parse_filter(bad)
    message = str(info.value)
    assert message.startswith("malformed filter at ")
    assert '{"field": value, ...}' in message and '"op": "eq"' in message
