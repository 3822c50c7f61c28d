"""A memory whose frontmatter fields have the wrong types is indexed as text with one warning
per field (naming the file, the field and the type it needs), and nothing shows a Python repr
of the bad values."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from engram.memories.fields import FIELDS, check_fields, scalar_text
from support import MemoryFactory

BAD = {
    "type": "[1, 2]",
    "importance": "lots",
    "superseded_by": "{a: 1}",
    "tags": "{x: y}",
    "conflicts_with": "{b: 2}",
    "revisions": "[just words]",
}


def test_bad_field_types_warn_on_index_and_the_memory_stays_searchable(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    memory = open_memory()
    stored = memory.remember("Deploys go out on Tuesdays after the change review.")
    path = tmp_path / stored.path
    text = path.read_text(encoding="utf-8")
    for field, value in BAD.items():
        text, found = re.subn(rf"^{field}: .*$", f"{field}: {value}", text, flags=re.M)
        if not found:
            text = text.replace("---\n", f"---\n{field}: {value}\n", 1)
    path.write_text(text, encoding="utf-8")

    report = memory.index()
    warned = [w for w in report.warnings if w.startswith(stored.path)]
    assert len(warned) == len(BAD), report.warnings
    for field in BAD:
        [line] = [w for w in warned if f"'{field}'" in w]
        assert FIELDS[field][1] in line and "indexed as text" in line
    hits = memory.search("when do deploys go out", limit=3).hits
    assert hits and "Tuesdays" in hits[0].chunk.text

    history = memory.history(stored.id)
    shown = history.model_dump_json()
    assert "[1, 2]" not in shown and "{'a': 1}" not in shown and "lots" not in shown
    info = history.memory
    assert info.type is None and info.superseded_by is None and info.status == "live"


frontmatter_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)


@given(st.dictionaries(st.sampled_from([*FIELDS, "other"]), frontmatter_values))
def test_checking_any_frontmatter_never_raises_and_names_only_bad_known_fields(
    meta: dict[str, Any],
) -> None:
    warnings = check_fields(meta)
    for line in warnings:
        name = line.split("'")[1]
        assert name in FIELDS and meta[name] is not None and not FIELDS[name][0](meta[name])
    assert len(warnings) == sum(
        1 for k, v in meta.items() if k in FIELDS and v is not None and not FIELDS[k][0](v)
    )


@given(frontmatter_values)
def test_scalar_text_never_shows_a_container(value: Any) -> None:
    shown = scalar_text(value)
    assert shown is None or not isinstance(value, list | dict)
