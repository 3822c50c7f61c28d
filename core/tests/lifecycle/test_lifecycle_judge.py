"""The offline judge, one family at a time, with the examples of issue #23: a merge only for the
same fact; polarity flips, antonyms, reversed preferences and changed settings supersede; another
invoice or host is kept beside the first; "over" is a preference only after a verb of choosing."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.config import LifecycleConfig
from engram.memories.judge.dedup import Neighbour, plan_write
from engram.memories.judge.verdicts import RELATIONS, Candidate, Verdict, judge
from engram.models import ExtractedMemory, KnownMemory

RULES = LifecycleConfig()


def verdict(old: str, new: str, kind: str = "note", distance: float = 0.05) -> Verdict:
    return judge(
        ExtractedMemory(type=kind, content=new),
        KnownMemory(id="old", type=kind, content=old),
        distance,
        RULES,
    )


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("The man is walking.", "The man is not walking.", "note"),
        ("A girl is looking up.", "A girl is looking down.", "note"),
        ("Always run ruff before committing.", "Never run ruff before committing.", "preference"),
        ("Always squash commits before merging.", "Never squash commits before merging.", "note"),
        ("The user prefers tabs over spaces.", "The user prefers spaces over tabs.", "preference"),
        ("The API listens on port 8080.", "The API listens on port 9090.", "project-config"),
        ("The staging host is db1.internal.", "The staging host is db2.internal.", "fact"),
        ("We use PostgreSQL for billing.", "We switched billing from PostgreSQL to MySQL.", "fact"),
        ("The cache is enabled in CI.", "The cache is disabled in CI.", "project-config"),
        ("The user prefers tabs.", "The user no longer wants tabs.", "preference"),
        ("The notes live in docs/notes.md.", "The notes live in docs/todo.md.", "note"),
        ("Alice lives in Paris.", "Alice moved to Berlin.", "fact"),
        ("We deploy on Tuesdays.", "We deploy on Thursdays.", "decision"),
        (
            "The mother tongue of Danielle Darrieux is French.",
            "Danielle Darrieux's mother tongue is English.",
            "fact",
        ),
    ],
)
def test_a_reversal_of_the_same_statement_supersedes(old: str, new: str, kind: str) -> None:
    found = verdict(old, new, kind)
    assert found.relation == "supersedes", found.reason


@pytest.mark.parametrize(
    ("old", "new", "why"),
    [
        (
            "Invoice INV-2024-0042 was paid on March 3.",
            "Invoice INV-2024-0043 was paid on March 3.",
            "identifier",
        ),
        ("Service alpha110 runs on host h110.", "Service alpha1110 runs on host h1110.", "id"),
        ("The build takes 4 minutes.", "The build takes 7 minutes.", "new value"),
        ("Two dogs run on the beach.", "Two dogs run on the beach at sunset.", "adds to"),
        ("I like tea.", "I like coffee.", "as well as"),
        ("Deborah visited her mother's house.", "Jolene has a room in her mother's house.", "sub"),
    ],
)
def test_a_difference_that_carries_meaning_keeps_both(old: str, new: str, why: str) -> None:
    for kind in ("note", "decision"):
        found = verdict(old, new, kind, distance=0.02)
        assert found.relation == "related", found.reason
        assert why in found.reason or why in ("identifier", "id")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("The user prefers tabs for indentation.", "The user prefers tabs for indentation!"),
        ("Run ruff before every commit.", "Always run ruff before committing."),
        (
            "The billing service stores invoices in PostgreSQL 15.",
            "The billing service keeps its invoices in PostgreSQL 15.",
        ),
    ],
)
def test_a_plain_paraphrase_is_the_same_fact(old: str, new: str) -> None:
    found = verdict(old, new, "preference")
    assert found.relation == "same", found.reason


def test_same_needs_the_duplicate_distance_and_the_type() -> None:
    text = "The user prefers tabs for indentation."
    assert verdict(text, text, "preference", distance=0.3).relation == "distinct"
    assert verdict(text, text, "preference", distance=0.6).relation == "distinct"
    other = judge(
        ExtractedMemory(type="preference", content=text),
        KnownMemory(id="o", type="note", content=text),
        0.0,
        RULES,
    )
    assert other.relation == "related"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("A man is holding a bike over his head.", "A man is holding a bike."),
        ("People all over the world like soccer.", "People like soccer."),
        ("The user prefers dark mode in the editor.", "The user prefers tabs over spaces."),
    ],
)
def test_over_is_a_preference_only_after_a_verb_of_choosing(old: str, new: str) -> None:
    assert verdict(old, new, distance=0.3).relation != "supersedes"
    assert verdict(new, old, distance=0.3).relation != "supersedes"


def test_an_unsure_new_value_conflicts_and_two_negations_cancel() -> None:
    unsure = verdict("Deploys are approved by Alice.", "Deploys are approved by Bob.")
    assert unsure.relation == "conflicts", unsure.reason
    other = verdict("A dog runs in the park.", "The black dog is not running fast by the lake.")
    assert other.relation == "related", other.reason  # a negation of another statement
    assert verdict("The door is not open.", "The door is closed.").relation == "related"


def test_plan_write_merges_only_the_same_fact_and_sorts_the_rest() -> None:
    def near(memory_id: str, text: str, distance: float) -> Neighbour:
        known = KnownMemory(id=memory_id, type="note", content=text)
        return Neighbour(memory_id, f"m/{memory_id}.md", "note", distance, known)

    neighbours = [
        near("inv", "Invoice INV-2024-0043 was paid on March 3.", 0.02),
        near("walk", "The invoice clerk is not walking.", 0.05),
        near("same", "Invoice INV-2024-0042 was paid on March 3!", 0.06),
        near("far", "Lunch is at noon.", 0.9),
    ]
    new = ExtractedMemory(type="note", content="Invoice INV-2024-0042 was paid on March 3.")
    plan = plan_write(new, neighbours, RULES, None)
    assert plan.duplicate is not None and plan.duplicate.id == "same"
    assert [n.id for n in plan.related] == ["inv", "walk"]
    assert plan.stale == [] and plan.conflicts == []


class _BadJudge:
    """An extractor whose judge says "same" to everything: a merge still needs the offline
    reading to agree on values and polarity."""

    name = "bad"

    def extract(self, messages: object, mode: str = "normal") -> list[ExtractedMemory]:
        return []

    def judge_memories(
        self, new: ExtractedMemory, candidates: Sequence[Candidate], rules: LifecycleConfig
    ) -> list[Verdict]:
        return [Verdict("same", "model says so") for _ in candidates]


def test_an_extractors_same_is_checked_against_values_and_polarity() -> None:
    old = KnownMemory(id="a", type="note", content="Invoice INV-2024-0043 was paid.")
    neighbour = Neighbour("a", "m/a.md", "note", 0.02, old)
    new = ExtractedMemory(type="note", content="Invoice INV-2024-0042 was paid.")
    plan = plan_write(new, [neighbour], RULES, _BadJudge())
    assert plan.duplicate is None and plan.related == [neighbour]
    reworded = ExtractedMemory(type="note", content="Invoice INV-2024-0043 got paid.")
    assert plan_write(reworded, [neighbour], RULES, _BadJudge()).duplicate == neighbour


_WORDS = st.sampled_from(
    ["service", "cache", "build", "deploy", "review", "invoice", "host", "port", "user", "team"]
)


@given(
    words=st.lists(_WORDS, min_size=2, max_size=6),
    number=st.integers(0, 10_000),
    other=st.integers(0, 10_000),
    distance=st.floats(0, 1),
)
def test_a_differing_number_is_never_the_same_fact(
    words: list[str], number: int, other: int, distance: float
) -> None:
    text = " ".join(words)
    mine = verdict(f"The {text} is {number}.", f"The {text} is {other}.", "note", distance)
    assert mine.relation in RELATIONS and mine.reason
    if number != other:
        assert mine.relation != "same"
    itself = verdict(f"The {text} is {number}.", f"The {text} is {number}.", "note", distance)
    assert itself.relation == ("same" if distance <= RULES.duplicate_distance else "distinct")


@given(new=st.text(min_size=1, max_size=200), old=st.text(min_size=1, max_size=200))
def test_any_text_gets_a_verdict_and_a_reason(new: str, old: str) -> None:
    """plan_write runs the judge on every write: no input may make it raise."""
    found = verdict(old, new, "preference", distance=0.05)
    assert found.relation in RELATIONS and found.reason
    assert verdict(new, new, "preference", distance=0.0).relation == "same"


def test_the_title_heading_of_a_stored_memory_is_not_part_of_the_fact() -> None:
    """read_known gives the file's body, which starts with ``# title``; a custom title on the old
    memory must not make the same fact look different."""
    stored = KnownMemory(
        id="old",
        type="project-config",
        title="How to test",
        content="# How to test\n\nRun the tests with `pytest -q`.",
    )
    new = ExtractedMemory(type="project-config", content="Run the tests with `pytest -q`.")
    assert judge(new, stored, 0.05, RULES).relation == "same"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            "Andrew does not currently have any pets.",
            "Andrew appreciates friends who understand the love for pets.",
        ),
        ("Gina encourages Jon not to give up.", "Gina encourages Jon to keep pushing."),
        ("Nate has an Iron Man figure.", "Nate watched 'Little Women'."),
        (
            "Deborah visited her mother's old house.",
            "Jolene has a room in her mother's house.",
        ),
        ("Caroline goes to the gym before work.", "Caroline goes to the gym after work."),
        ("Melanie takes the first train.", "Melanie takes the last train."),
    ],
)
def test_issue_36s_false_reversals_on_personal_facts_are_not_reversals(old: str, new: str) -> None:
    """LoCoMo's wrong supersedes and conflicts of issue #36: a flip of another statement, two
    people, and words ("before/after", "first/last", "rather than") that reverse nothing."""
    for distance in (0.05, 0.3):
        found = verdict(old, new, "fact", distance)
        assert found.relation in ("related", "distinct"), found.reason


def test_choosing_what_was_rejected_is_only_a_maybe() -> None:
    found = verdict("Jon prefers running rather than cycling.", "Jon likes cycling with friends.")
    assert found.relation == "conflicts", found.reason


def test_below_the_similarity_floor_the_judge_does_nothing() -> None:
    far = verdict("The man is aiming a gun.", "The man is not aiming a gun.", distance=0.51)
    assert far.relation == "distinct" and far.reason.startswith("floor")
