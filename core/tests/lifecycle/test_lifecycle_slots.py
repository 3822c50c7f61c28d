"""Slots (issue #36): what a memory is about, read by named rules, and the judge's promise on
them: a judgment never crosses subjects."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engram.config import LifecycleConfig
from engram.memories.judge.slot_words import USER
from engram.memories.judge.slots import PROJECT, Slots, read_slots, same_subject
from engram.memories.judge.verdicts import judge
from engram.models import ExtractedMemory, KnownMemory

RULES = LifecycleConfig()


@pytest.mark.parametrize(
    ("text", "subject", "attribute", "value"),
    [
        # noun phrase: a name as the first word is the subject
        ("Alice lives in Paris.", "alice", "live in", "paris"),
        ("Deborah visited her mother's house.", "deborah", "visit", "her mother's house"),
        ("Jolene has a room in her mother's house.", "jolene", "have", None),
        # first person: the user; we / our: the project
        ("I like tea.", USER, "like", "tea"),
        ("We deploy on Tuesdays.", PROJECT, "deploy on", "tuesdays"),
        # speaker: a captured fact names its speaker
        ("The user prefers dark mode.", USER, "prefer", "dark mode"),
        # of / possessive: the attribute is the noun
        (
            "The mother tongue of Danielle Darrieux is French.",
            "danielle darrieux",
            "mother tongue",
            "french",
        ),
        (
            "Danielle Darrieux's mother tongue is English.",
            "danielle darrieux",
            "mother tongue",
            "english",
        ),
        ("The capital of France is Paris.", "france", "capital", "paris"),
        # opening clause
        ("Yesterday, Caroline went to a support group.", "caroline", "go to", "support group"),
        # verb: particles belong to the attribute; a role after "is" too
        ("The API server listens on port 8080.", "api server", "listen on", "port 8080"),
        ("Toko Yasuda is a citizen of Japan.", "toko yasuda", "be citizen of", "japan"),
        ("We use PostgreSQL for billing.", PROJECT, "use for billing", "postgresql"),
        # an identifier stays in the subject: another invoice is another subject
        ("Invoice INV-2024-0042 was paid on March 3.", "invoice inv-2024-0042", "be", None),
        # role: "<name> is the <role> of <Name>" is the named owner's fact, as "The capital of
        # France is Paris" is France's
        ("Paris is the capital of France.", "france", "capital", "paris"),
        ("Ruud Brood is the head coach of NAC Breda.", "nac breda", "head coach", "ruud brood"),
        (
            "Jens Beutel is the head of the government of Mainz.",
            "mainz",
            "head of government",
            "jens beutel",
        ),
        (
            "Ana Obi is the chair of Embassy of Ukraine, Ottawa.",
            "embassy of ukraine ottawa",
            "chair",
            "ana obi",
        ),
        # ... not for kin or a thing without a name
        ("Deborah is the daughter of Anna.", "deborah", "be daughter of", "anna"),
        ("Alice is the owner of the bakery.", "alice", "be owner of", "the bakery"),
        # a title after a verb is the value
        (
            "Andrew Cuomo holds the position of Governor of New York.",
            "andrew cuomo",
            "hold position of",
            "governor of new york",
        ),
        # names: initials and titles end no sentence, any alphabet, a capitalised "AS" is no
        # particle
        ("Pedro J. Ramírez works for El Mundo.", "pedro j ramírez", "work for", "el mundo"),
        (
            "Steve Smith Sr. plays for Carolina Panthers.",
            "steve smith sr",
            "play for",
            "carolina panthers",
        ),
        ("Kylian Mbappé plays for AS Monaco FC.", "kylian mbappé", "play for", "as monaco fc"),
        (
            "Vítězslav Lavička is the head coach of Śląsk Wrocław.",
            "śląsk wrocław",
            "head coach",
            "vítězslav lavička",
        ),
    ],
)
def test_each_rule_reads_its_example(
    text: str, subject: str, attribute: str, value: str | None
) -> None:
    slots = read_slots(text)
    assert (slots.subject, slots.attribute) == (subject, attribute)
    if value is not None:
        assert slots.value == value


@pytest.mark.parametrize(
    ("text", "attribute", "value"),
    [
        ("Alice moved to Berlin.", "live in", "berlin"),
        ("We switched from MySQL to Postgres.", "use", "postgres"),
        ("Alice no longer lives in Paris.", "live in", "paris"),
    ],
)
def test_a_verb_of_change_names_the_attribute_it_changes(
    text: str, attribute: str, value: str
) -> None:
    slots = read_slots(text)
    assert (slots.attribute, slots.value, slots.change) == (attribute, value, True)


def test_the_speaker_is_who_says_i_and_an_imperative_has_no_subject() -> None:
    assert read_slots("I moved to Berlin.", speaker="Caroline").subject == "caroline"
    assert read_slots("My sister lives in Rome.").subject == USER
    assert read_slots("Always run ruff before committing.").subject is None
    assert read_slots("").subject is None


def test_subjects_match_on_their_last_words_and_unknown_is_not_a_match() -> None:
    assert same_subject("Danielle Darrieux", "darrieux") is True
    assert same_subject("black dog", "dog") is True
    assert same_subject("Deborah", "Jolene") is False
    assert same_subject(None, "Jolene") is None
    assert Slots(subject="x", value="y").frontmatter() == {"subject": "x", "value": "y"}


_NAMES = st.sampled_from(
    ["Alice", "Bob", "Caroline", "Melanie", "Deborah", "Jolene", "Andrew", "Gina", "Jon", "Nate"]
)
_TEMPLATES = st.sampled_from(
    [
        "{s} lives in {v}.",
        "{s} moved to {v}.",
        "{s} likes {v}.",
        "{s} no longer likes {v}.",
        "{s} visited {v}.",
        "{s} does not have {v}.",
        "{s} works at {v}.",
        "The mother tongue of {s} is {v}.",
        "{s}'s favourite city is {v}.",
        "Yesterday, {s} went to {v}.",
        "{s} is not happy about {v}.",
    ]
)
_VALUES = st.sampled_from(["Paris", "Berlin", "tea", "the museum", "a dog", "French", "Google"])


@given(_NAMES, _TEMPLATES, _VALUES)
def test_a_name_anywhere_in_the_sentence_is_its_subject(
    name: str, template: str, value: str
) -> None:
    assert read_slots(template.format(s=name, v=value)).subject == name.lower()


@given(
    st.tuples(_NAMES, _NAMES).filter(lambda pair: pair[0] != pair[1]),
    _TEMPLATES,
    _TEMPLATES,
    _VALUES,
    _VALUES,
    st.floats(0, 0.8),
    st.sampled_from(["note", "fact", "preference", "decision"]),
)
def test_no_judgment_ever_crosses_subjects(
    names: tuple[str, str],
    new_template: str,
    old_template: str,
    new_value: str,
    old_value: str,
    distance: float,
    kind: str,
) -> None:
    """Two memories about two people are never merged, superseded or marked as conflicting,
    whatever they say and however close they are."""
    new = ExtractedMemory(type=kind, content=new_template.format(s=names[0], v=new_value))
    old = KnownMemory(id="old", type=kind, content=old_template.format(s=names[1], v=old_value))
    verdict = judge(new, old, distance, RULES)
    assert verdict.relation in ("related", "distinct"), verdict.reason


def test_slots_given_by_the_frontmatter_win_over_the_text() -> None:
    """A memory's recorded subject decides: the same sentence stored about another person is
    another person's fact."""
    slot = {"attribute": "live in"}
    new = ExtractedMemory(
        type="fact", content="Lives in Berlin.", subject="Alice", value="berlin", **slot
    )
    old = KnownMemory(id="o", type="fact", content="Lives in Paris.", subject="Bob", **slot)
    assert judge(new, old, 0.05, RULES).relation == "related"
    same = KnownMemory(
        id="o", type="fact", content="Lives in Paris.", subject="alice", value="paris", **slot
    )
    assert judge(new, same, 0.05, RULES).relation == "supersedes"


@pytest.mark.parametrize(
    ("old", "new", "relation"),
    [
        # a role only one holds at a time, said either way round
        (
            "Ruud Brood is the head coach of NAC Breda.",
            "Jan Wouters is the head coach of NAC Breda.",
            "supersedes",
        ),
        ("The capital of Bolivia is Sucre.", "La Paz is the capital of Bolivia.", "supersedes"),
        # a name in the value negates nothing ("Bane NOR")
        (
            "Dovre Line is owned by Norwegian National Rail Administration.",
            "Dovre Line is owned by Bane NOR.",
            "supersedes",
        ),
        # a long name as the value of an attribute not known single-valued: unsure
        (
            "Andrew Cuomo holds the position of Attorney General of New York.",
            "Andrew Cuomo holds the position of Governor of New York.",
            "conflicts",
        ),
        # another owner's role, kin: never a change
        (
            "Ruud Brood is the head coach of NAC Breda.",
            "Ruud Brood is the head coach of Ajax.",
            "related",
        ),
        ("Deborah is the daughter of Anna.", "Jolene is the daughter of Anna.", "related"),
        # a change of a thing the subject has touches only memories that mention it
        (
            "Nate made vanilla ice cream for a friend.",
            "Nate's game tournament got pushed back, so he made coconut ice cream.",
            "distinct",
        ),
        (
            "Nate's game tournament is on Friday.",
            "Nate's game tournament got pushed back.",
            "conflicts",
        ),
    ],
)
def test_the_judge_reads_roles_and_names(old: str, new: str, relation: str) -> None:
    got = judge(
        ExtractedMemory(type="fact", content=new, title="t"),
        KnownMemory(id="old", type="fact", content=old),
        0.2,
        RULES,
    )
    assert got.relation == relation, got.reason
