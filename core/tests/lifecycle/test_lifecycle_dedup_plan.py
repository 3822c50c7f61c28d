"""The dedup write plan, with no model: a contradiction is never merged as a duplicate, and the
structural types use the wider thresholds. (Dedup and contradiction end to end, with the real
local embedder the constants are tuned for: tests/lifecycle/test_lifecycle_dedup.py.)"""

from __future__ import annotations

from engram.config import LifecycleConfig
from engram.memories.judge.dedup import Neighbour, plan_write
from engram.models import ExtractedMemory, KnownMemory


def test_a_reversal_is_never_merged_as_a_duplicate() -> None:
    """The seed skipped the contradiction check for near-duplicates; a reversal is one."""
    rules = LifecycleConfig()
    old = KnownMemory(id="a", type="preference", content="The user prefers tabs.")
    close = Neighbour(id="a", document_id="m/a.md", type="preference", distance=0.01, memory=old)

    class Judge:
        name = "judge"

        def extract(self, messages: object, mode: str = "normal") -> list[ExtractedMemory]:
            return []

        def find_contradictions(
            self, new: ExtractedMemory, candidates: list[KnownMemory]
        ) -> list[str]:
            return [c.id for c in candidates]

    new = ExtractedMemory(type="preference", content="The user prefers spaces.")
    plan = plan_write(new, [close], rules, Judge())
    assert plan.duplicate is None and [n.id for n in plan.stale] == ["a"]
    # Without an extractor the offline judge reads tabs → spaces as a reversal all the same.
    plan = plan_write(new, [close], rules, None)
    assert plan.duplicate is None and [n.id for n in plan.stale] == ["a"]


def test_structural_types_use_the_wider_thresholds() -> None:
    rules = LifecycleConfig()
    assert rules.duplicate_limit("architecture") == 0.25
    assert rules.duplicate_limit("preference") == 0.12
    assert rules.contradiction_limit("project-brief") == 0.75
    assert rules.contradiction_limit("decision") == 0.5
    text = "The API gateway fronts every service."
    near = KnownMemory(id="b", type="architecture", content=text)
    neighbour = Neighbour(
        id="b", document_id="m/b.md", type="architecture", distance=0.2, memory=near
    )
    plan = plan_write(ExtractedMemory(type="architecture", content=text), [neighbour], rules, None)
    assert plan.duplicate is neighbour
    plan = plan_write(ExtractedMemory(type="decision", content=text), [neighbour], rules, None)
    assert plan.duplicate is None
