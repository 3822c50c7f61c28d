"""The memory types' table is the one place their meaning and behaviour live: the names agree
with ``MemoryType`` and aging, recall and type-aware search behave by the table's rows."""

from __future__ import annotations

from typing import get_args

from hypothesis import given
from hypothesis import strategies as st

from engram import types as mt
from engram.config import LifecycleConfig
from engram.memories.judge.aging import plan_aging
from engram.memories.query_types import asked_type
from engram.models import EXTRACTED_TYPES, MemoryInfo, MemoryType


def test_the_table_names_every_type_once_and_models_reads_it() -> None:
    names = [t.name for t in mt.TYPES]
    assert names == list(get_args(MemoryType)) and len(set(names)) == len(names)
    assert EXTRACTED_TYPES == mt.EXTRACTED_TYPES
    assert set(EXTRACTED_TYPES) == {t.name for t in mt.TYPES if t.extracted}
    assert {"note", "entity"}.isdisjoint(EXTRACTED_TYPES)
    assert all(t.description.strip() for t in mt.TYPES)
    assert LifecycleConfig().structural_types == list(mt.STRUCTURAL_TYPES)


def test_type_words_name_their_type() -> None:
    for info in mt.TYPES:
        for word in info.words:
            assert asked_type(f"what are my {word}") == info.name
    assert asked_type("what are my preferences and decisions") is None


def _memory(i: int, type: str, project: str = "p") -> MemoryInfo:
    return MemoryInfo(
        id=f"m{i:03d}",
        path=f"memory/m{i:03d}.md",
        title=f"m{i}",
        type=type,
        project=project,
        created_at=f"2026-01-01T00:{i // 60:02d}:{i % 60:02d}+00:00",
    )


@given(st.lists(st.sampled_from(mt.NAMES), max_size=30), st.integers(0, 5))
def test_aging_follows_each_types_rule(types: list[str], keep: int) -> None:
    memories = [_memory(i, t) for i, t in enumerate(types)]
    plan = plan_aging(memories, LifecycleConfig(keep_session_summaries=keep))
    superseded = {old.id for old, _ in plan.superseded}
    condensed = {m.id for group in plan.condense for m in group}
    for m in memories:
        rule = mt.BY_NAME[m.type or ""].aging
        newest = max((n for n in memories if n.type == m.type), key=lambda n: (n.created_at, n.id))
        rank = sorted(
            (n for n in memories if n.type == m.type),
            key=lambda n: (n.created_at, n.id),
            reverse=True,
        ).index(m)
        assert (m.id in superseded) == (rule == "latest-only" and m is not newest)
        assert (m.id in condensed) == (rule == "condense" and rank >= keep)
        assert mt.ages(m.type) == (rule != "never")
