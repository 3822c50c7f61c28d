"""A search hit shows the sentence that answers, not the first characters of its chunk."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engram.text.snippets import ELLIPSIS, snippet

ALICE = (
    "# Alice Moreau\n\nStaff engineer on the payments team. Prefers written design docs over "
    "meetings and reviews pull\nrequests in the morning (Paris time). Owner of the billing "
    "service and the Stripe integration."
)


def test_the_sentence_with_the_query_words_is_shown_whole() -> None:
    shown = snippet(ALICE, "who owns the billing service?", 160)
    assert shown == ELLIPSIS + "Owner of the billing service and the Stripe integration."


def test_a_chunk_that_fits_is_shown_whole_and_no_match_shows_the_start() -> None:
    assert snippet("One. Two.", "two", 160) == "One. Two."
    flat = " ".join(ALICE.split())
    assert snippet(ALICE, "kubernetes", 40) == flat[:39] + ELLIPSIS


@given(
    st.lists(st.text(alphabet="abc xyz.!?\n", min_size=1, max_size=60), max_size=8),
    st.text(alphabet="abcxyz ", max_size=12),
    st.integers(min_value=2, max_value=120),
)
def test_a_snippet_fits_and_quotes_the_text(parts: list[str], query: str, limit: int) -> None:
    text = " ".join(parts)
    shown = snippet(text, query, limit)
    assert len(shown) <= limit
    assert shown.strip(ELLIPSIS) in " ".join(text.split())
