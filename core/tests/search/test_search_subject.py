"""Search by subject (issue 36, point 1): the typed filter matches exactly what ``engram list
--subject`` matches (``same_subject``), whatever the case, and it narrows every path of the one
search entry: ranked hits, typed hits first, history."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.filters import matches
from engram.memories.judge.slots import same_subject
from engram.memories.subjects import affixes, subject_fields, subject_filter, subject_key
from support import MemoryFactory

# Few words, mixed case and spacing, a possessive and a typographic apostrophe now and then:
# enough collisions for prefixes, suffixes and equal keys to come up often.
_WORD = st.sampled_from(["Alice", "alice", "ALICE", "Smith", "the", "user", "Q3", "dog", "Bob"])
_SUBJECT = st.builds(
    lambda words, gap, tail: gap.join(words) + tail,
    st.lists(_WORD, min_size=0, max_size=4),
    st.sampled_from([" ", "  ", "\t", " \n "]),
    st.sampled_from(["", "'s", "\u2019s", " "]),
)


# No wall-clock limits: the machine running the suite may be busy.
CALM = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])


@CALM
@given(stored=_SUBJECT, asked=_SUBJECT)
def test_the_filter_matches_what_the_list_matches(stored: str, asked: str) -> None:
    metadata = {"subject": stored, **subject_fields(stored)}
    found = matches(subject_filter(asked), metadata) if asked.strip() else False
    assert found == (same_subject(stored, asked) is True)


@CALM
@given(subject=_SUBJECT)
def test_keys_are_case_and_space_blind(subject: str) -> None:
    key = subject_key(subject)
    assert key == subject_key(subject.upper().replace(" ", "  "))
    assert key == key.casefold() and "  " not in key
    if key:
        assert affixes(key)[0] == key and len(set(affixes(key))) == len(affixes(key))


def test_a_subject_with_no_words_matches_nothing() -> None:
    assert not matches(subject_filter("  "), {"subject": "", **subject_fields("alice")})
    assert subject_fields(None) == {} and subject_fields(["a"]) == {} and subject_fields(" ") == {}


def test_search_by_subject_any_case(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    caroline = memory.remember("Prefers window seats on long flights.", subject="Caroline")
    melanie = memory.remember("Prefers aisle seats on long flights.", subject="Melanie")
    darrieux = memory.remember("Danielle Darrieux speaks French.", type="fact")

    def paths(subject: str | None = None) -> list[str]:
        return [h.chunk.document_id for h in memory.search("seats flights", subject=subject).hits]

    assert set(paths()) >= {caroline.path, melanie.path}
    assert paths(subject="CAROLINE") == [caroline.path]
    assert paths(subject=" melanie ") == [melanie.path]
    assert paths(subject="Bob") == []
    # A name finds a longer one ending with it (as `engram list --subject` does), any case.
    hits = memory.search("speaks French", subject="DARRIEUX").hits
    assert [h.chunk.document_id for h in hits] == [darrieux.path]
    assert hits[0].chunk.metadata["subject_key"] == "danielle darrieux"


def test_typed_hits_first_keep_to_the_subject(open_memory: MemoryFactory) -> None:
    """A query that names a type puts that type's memories first: only the subject's."""
    memory = open_memory()
    mine = memory.remember("I prefer dark roast coffee.", type="preference")
    hers = memory.remember("Prefers green tea.", type="preference", subject="Caroline")
    found = memory.search("what are my preferences", subject="user").hits
    assert [h.chunk.document_id for h in found] == [mine.path]
    found = memory.search("what are my preferences", subject="caroline").hits
    assert [h.chunk.document_id for h in found] == [hers.path]


def test_history_by_subject_only_when_asked(open_memory: MemoryFactory) -> None:
    """A superseded memory (here written by hand) about the subject shows only with history."""
    memory = open_memory()
    berlin = memory.remember("Alice moved to Berlin.", type="fact")
    old = memory.memory_dir / "fact" / "alice-paris.md"
    old.write_text(
        "---\nid: old-paris\ntype: fact\nsubject: ALICE\nstatus: superseded\n"
        "created_at: '2020-01-01T00:00:00+00:00'\n---\nAlice lives in Paris.\n",
        encoding="utf-8",
    )
    memory.index()
    live = memory.search("Alice lives", subject="Alice").hits
    assert {h.chunk.document_id for h in live} == {berlin.path}
    every = memory.search("Alice lives", subject="alice", include_superseded=True).hits
    assert {h.chunk.document_id for h in every} == {berlin.path, "memory/fact/alice-paris.md"}
