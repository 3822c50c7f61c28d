"""Issue 36, point 4: a fact ``rules`` captures names its speaker as its subject (never the other
speaker), and junk is dropped by named rules a reader can check, each shown by its example."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.default_plugins.rules_extractor import RulesExtractor, speaker_subject
from engram.default_plugins.rules_junk import JUNK_RULES, JunkRule, junk_rule
from engram.models import Message

FACTS = [
    "I moved to Berlin last year.",
    "I adopted a dog named Rex.",
    "My sister lives in Lisbon.",
    "I started a pottery class last week.",
    "I work as a nurse at the city hospital.",
    "I went to a support group meeting yesterday.",
]
PADDING = ["Hey, how are you?", "Thanks, that sounds great!", "Yeah, makes sense.", "Wow!"]


def test_a_fact_from_a_named_speaker_is_about_that_speaker() -> None:
    messages = [
        Message(role="user", content="I moved to Berlin last year.", name="Caroline"),
        Message(role="assistant", content="That is exciting, tell me more!", name="Melanie"),
    ]
    found = RulesExtractor().extract(messages)
    assert [(m.subject, m.content) for m in found] == [
        ("Caroline", "The user moved to Berlin last year.")
    ]


def test_the_users_own_session_stores_facts_about_the_user() -> None:
    found = RulesExtractor().extract([Message(role="user", content="I adopted a dog named Rex.")])
    assert [m.subject for m in found] == ["user"]


def test_the_subject_is_the_speaker_not_a_blank_name() -> None:
    assert speaker_subject(Message(role="user", content="x", name="  ")) == "user"
    assert speaker_subject(Message(role="assistant", content="x")) == "assistant"
    assert speaker_subject(Message(role="assistant", content="x", name="Mel")) == "Mel"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["Caroline", "Melanie"]), st.sampled_from(FACTS + PADDING)),
        min_size=1,
        max_size=8,
    ),
    st.sampled_from(["Caroline", "Melanie"]),
)
def test_every_fact_is_about_the_speaker_of_its_turn(
    turns: list[tuple[str, str]], side: str
) -> None:
    # Each turn's text is tagged with its turn number so a memory can be traced to its turn.
    messages = [
        Message(
            role="user" if who == side else "assistant",
            content=text.replace(".", f" number {i}.") if text in FACTS else text,
            name=who,
        )
        for i, (who, text) in enumerate(turns)
    ]
    for memory in RulesExtractor().extract(messages):
        sources = [i for i, _ in enumerate(turns) if f"number {i}" in memory.content]
        assert sources, memory.content
        assert {turns[i][0] for i in sources} == {memory.subject}


@pytest.mark.parametrize("rule", JUNK_RULES, ids=lambda r: r.name)
def test_each_junk_rule_drops_its_example(rule: JunkRule) -> None:
    assert junk_rule(rule.example) == rule.name


@pytest.mark.parametrize(
    "memory",
    [
        "The user moved to Berlin last year.",
        "The user has two kids named Sam and Ana.",
        "The user works as a nurse at the city hospital.",
        "The assistant said: the fix was to pin numpy below 2.",
        # "this" that goes on to say what it is, a time, "one of", "those who"
        "The user is reading this amazing series about the power of friendship.",
        "The user got a new job this week.",
        "The user had a great accomplishment this Tuesday!",
        "The user went to one of the best concerts of the year.",
        "The user volunteers with a group that helps those who are less fortunate.",
    ],
)
def test_a_fact_is_not_junk(memory: str) -> None:
    assert junk_rule(memory) is None


def test_junk_said_in_a_conversation_is_not_stored() -> None:
    messages = [Message(role="user", content=t, name="Caroline") for t in PADDING]
    assert RulesExtractor().extract(messages) == []


@pytest.mark.parametrize(
    ("memory", "rule"),
    [
        ("The user has to go, bye!", "greeting or pleasantry"),
        ("The user gets them from various sources like books.", "unnamed reference"),
        ("The user is a huge fan.", "unnamed reference"),
        ("The user is trying out some strategy games like this.", "unnamed reference"),
        ("The user said: do you paint?", "question back"),
        ("The user has a lot of photos from this activity.", "unnamed reference"),
        ("The user loves those games too.", "unnamed reference"),
        ("The user played one with friends two days ago.", "unnamed reference"),
        ("The user is starting some big new things too!", "unnamed reference"),
        ("The user wants to help make that happen.", "unnamed reference"),
        ("The user got this as a reminder to rest.", "unnamed reference"),
    ],
)
def test_junk_is_dropped_by_the_rule_a_reader_expects(memory: str, rule: str) -> None:
    assert junk_rule(memory) == rule


def test_a_fact_whose_pronoun_comes_after_its_main_statement_is_kept() -> None:
    memory = "The user went to a LGBTQ support group yesterday and it was so powerful."
    assert junk_rule(memory) is None


@pytest.mark.parametrize(
    ("said", "stored"),
    [
        # a leading time clause goes to the end
        (
            "Since our last chat, I've started volunteering at the shelter.",
            "The user has started volunteering at the shelter since our last chat.",
        ),
        (
            "Next month I'm having an art show with my paintings.",
            "The user is having an art show with their paintings next month.",
        ),
        # a belief the person states
        (
            "I believe chess can improve decision-making skills.",
            "The user believes chess can improve decision-making skills.",
        ),
        # someone close, with any verb
        (
            "My family motivates me to keep striving for change.",
            "The user's family motivates the user to keep striving for change.",
        ),
        # what the speaker did with others, in the past
        (
            "We rented an apartment not far from our favourite bar.",
            "The user and others rented an apartment not far from their favourite bar.",
        ),
        (
            "My husband and I are trying to be good parents.",
            "The user's husband and the user are trying to be good parents.",
        ),
    ],
)
def test_a_personal_fact_is_stored_about_its_speaker(said: str, stored: str) -> None:
    found = RulesExtractor().extract([Message(role="user", content=said, name="Deborah")])
    assert [(m.subject, m.content) for m in found] == [("Deborah", stored)]


@pytest.mark.parametrize(
    "said",
    [
        "We deploy on Tuesdays.",  # a project's habit, not a person's past event
        "We could try that next time.",
        "My goodness, that was a lot of fun.",
    ],
)
def test_what_is_no_personal_fact_is_not_stored_as_one(said: str) -> None:
    found = RulesExtractor().extract([Message(role="user", content=said, name="Deborah")])
    assert [m for m in found if m.type == "fact"] == []
