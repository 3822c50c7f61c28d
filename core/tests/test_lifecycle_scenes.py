"""The scene rule: one subject that cannot be doing, be or be in two things at once. It reaches
past the contradiction limit (the texts read differently), so what matters most is where it must
stay silent: habits, tastes and plans, possessives, other subjects, another invoice."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.config import LifecycleConfig
from engram.lifecycle.dedup import Neighbour, plan_write
from engram.lifecycle.judge import Candidate, Verdict, judge
from engram.lifecycle.reading import read
from engram.lifecycle.scene_words import NOT_A_SCENE
from engram.lifecycle.scenes import incompatible, subject
from engram.models import ExtractedMemory, KnownMemory

RULES = LifecycleConfig()
FAR = 0.8  # past contradiction_distance (0.5), within incompatible_distance (1.0)


def verdict(old: str, new: str, distance: float = FAR, kind: str = "note") -> Verdict:
    return judge(
        ExtractedMemory(type=kind, content=new),
        KnownMemory(id="old", type=kind, content=old),
        distance,
        RULES,
    )


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("A man is sitting on a bench.", "The man is standing by the door."),
        ("A girl is reading a book.", "The girl is asleep."),
        ("Two kids are playing outside.", "The kids are in the kitchen."),
        ("A woman in a red coat is waiting.", "A woman in a blue coat is waiting."),
        ("A woman is carrying an umbrella.", "The woman is not carrying an umbrella."),
        ("A young man is sweeping the porch.", "An elderly man is sweeping the porch."),
        ("A man is fixing a bike.", "A woman is fixing a bike."),
        ("A group of women walk down the road.", "A group of men walk down the road."),
        ("A lady is standing in a crowd.", "The lady is standing alone."),
        ("A boy is riding a camel.", "A boy is riding an elephant."),
        ("A dog sleeps in the kitchen.", "The dog is playing in the garden."),  # a caption
        # a progressive says what happens now; "watches" is the crowd's, not a habit
        (
            "Men are running as a crowd watches.",
            "Two men are sitting on a bench as a crowd watches.",
        ),
        ("A small crowd of people is watching a show.", "There is no one in this picture."),
        ("A woman is dancing on the stage.", "Nobody is dancing."),
        ("Three girls are walking in a crowd.", "A girl walks by herself."),
        ("A man and a woman sit under a blue sky.", "The man and woman are sitting at home."),
        (
            "A black and white dog prepares to catch a ball.",
            "A black and white cat prepares to catch a ball.",
        ),
        ("A group of men are playing basketball.", "A group of men are sitting on a bench."),
        ("A man is caught in midair on a skateboard.", "The man is standing on the sidewalk."),
        ("A group of people are moving around.", "A group of people stand perfectly still."),
        ("A woman is sitting with two men hugging.", "A woman is sleeping on the couch."),
    ],
)
def test_one_subject_in_two_incompatible_states_supersedes(old: str, new: str) -> None:
    found = verdict(old, new)
    assert found.relation == "supersedes", found.reason
    assert "subject" in found.reason


@pytest.mark.parametrize(
    ("old", "new"),
    [
        # habits, tastes, plans: both hold
        ("The kids like swimming.", "The kids like reading."),
        ("The dog sleeps in the kitchen.", "The dog plays in the garden."),
        ("The dog sleeps in the kitchen.", "The dog is playing in the garden."),
        ("The man runs every morning.", "The man is swimming on Sundays."),
        ("The team meets in the office.", "The team has lunch in the park."),
        # possessives: one user has many relatives
        ("My sister lives in Berlin.", "My brother lives in Paris."),
        ("The user's son is learning the piano.", "The user's daughter is learning the guitar."),
        # another subject, or no subject this rule knows
        ("A man is sitting on a bench.", "A dog is standing by the door."),
        ("The build is running.", "The build is sleeping."),
        # another invoice: a different thing, not a different state
        ("A man paid invoice INV-1 standing.", "A man paid invoice INV-2 sitting."),
        # compatible: one sleeps lying down, one jumps into the water to swim
        ("A man is lying on the grass.", "A man is sleeping on the grass."),
        ("A man is jumping in the ocean.", "The man is swimming in the ocean."),
        # "nobody else", a negated old statement, a subject that is no person
        ("A woman is dancing on the stage.", "Nobody else is dancing."),
        ("A woman is not dancing.", "Nobody is dancing."),
        ("The build is running.", "Nobody is running the build."),
        # "home" is where one walks to, not a place one is in
        ("A woman is carrying bags along a street.", "A woman walks home."),
        # a dog and a cat that do different things are two animals
        ("A dog is chasing a ball in the park.", "A cat is sleeping on the sofa."),
        # by herself is alone; "herself" alone is not
        ("Three girls are walking in a crowd.", "A girl is walking and talking to herself."),
    ],
)
def test_what_can_hold_together_is_not_superseded(old: str, new: str) -> None:
    found = verdict(old, new)
    assert found.relation != "supersedes", found.reason


def test_the_rule_reaches_as_far_as_incompatible_distance_and_no_further() -> None:
    old, new = "A man is sitting on a bench.", "The man is standing by the door."
    assert verdict(old, new, distance=RULES.incompatible_distance).relation == "supersedes"
    assert verdict(old, new, distance=RULES.incompatible_distance + 0.01).relation == "distinct"
    narrow = LifecycleConfig(incompatible_distance=0.5)
    far = judge(
        ExtractedMemory(type="note", content=new),
        KnownMemory(id="old", type="note", content=old),
        FAR,
        narrow,
    )
    assert far.relation == "distinct"


def test_another_type_conflicts_instead_of_superseding() -> None:
    found = judge(
        ExtractedMemory(type="note", content="The man is standing by the door."),
        KnownMemory(id="old", type="fact", content="A man is sitting on a bench."),
        FAR,
        RULES,
    )
    assert found.relation == "conflicts"


def test_plan_write_judges_a_far_neighbour_only_by_the_scene_rule() -> None:
    def far(memory_id: str, text: str) -> Neighbour:
        known = KnownMemory(id=memory_id, type="note", content=text)
        return Neighbour(memory_id, f"m/{memory_id}.md", "note", FAR, known)

    neighbours = [
        far("sits", "A man is sitting on a bench."),
        far("flip", "The man is not standing by the door."),  # a flip, but too far to trust
    ]
    new = ExtractedMemory(type="note", content="The man is standing by the door.")
    plan = plan_write(new, neighbours, RULES, None)
    assert [n.id for n in plan.stale] == ["sits"]
    assert plan.duplicate is None and plan.conflicts == []


class _RecordingJudge:
    """An extractor with its own judge (as ``llm`` has): it says ``related`` to what it is
    shown and records it."""

    name = "recording"

    def __init__(self) -> None:
        self.shown: list[str] = []

    def extract(self, messages: object, mode: str = "normal") -> list[ExtractedMemory]:
        return []

    def judge_memories(
        self, new: ExtractedMemory, candidates: Sequence[Candidate], rules: LifecycleConfig
    ) -> list[Verdict]:
        self.shown += [c.memory.id for c in candidates]
        return [Verdict("related", "the model is unsure") for _ in candidates]


def test_an_extractors_judge_sees_only_the_contradiction_range() -> None:
    """Past the contradiction limit the offline scene rule decides alone: a model's judge is
    asked (and paid for) only about what it was asked about before the rule widened the range."""
    sits = KnownMemory(id="sits", type="note", content="A man is sitting on a bench.")
    near = KnownMemory(id="near", type="note", content="The man is standing by the bench.")
    neighbours = [
        Neighbour("near", "m/near.md", "note", 0.3, near),
        Neighbour("sits", "m/sits.md", "note", FAR, sits),
    ]
    new = ExtractedMemory(type="note", content="The man is standing by the door.")
    recording = _RecordingJudge()
    plan = plan_write(new, neighbours, RULES, recording)
    assert recording.shown == ["near"]
    assert [n.id for n in plan.stale] == ["sits"] and [n.id for n in plan.related] == ["near"]


def test_a_subject_is_read_from_the_opening_words_only() -> None:
    assert subject(read("A group of women walk by.")) == "female"
    assert subject(read("Three kids are playing.")) == "people"
    assert subject(read("The photo of a dog is blurry.")) is None
    assert subject(read("The user's wife is reading.")) is None
    assert subject(read("Deploys go out on Fridays after the team review.")) is None


_STATES = st.sampled_from(
    ["sitting", "standing", "running", "sleeping", "reading", "in the kitchen", "on the beach"]
)
_WHO = st.sampled_from(["man", "woman", "girl", "dog", "person", "group of boys"])


@given(who=_WHO, state=_STATES, marker=st.sampled_from(sorted(NOT_A_SCENE)))
def test_a_statement_never_contradicts_itself_and_a_habit_is_never_a_scene(
    who: str, state: str, marker: str
) -> None:
    text = read(f"A {who} is {state}.")
    assert incompatible(text, text) is None
    other = read(f"The {who} is sitting and {marker} {state}.")
    assert incompatible(other, text) is None and incompatible(text, other) is None
