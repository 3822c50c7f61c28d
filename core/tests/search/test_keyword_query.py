"""The keyword side searches without English stop words (``engram.text.stopwords``)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engram.config import SearchConfig
from engram.default_plugins.hash_embedder import HashEmbedder
from engram.default_plugins.memory_store import MemoryStore
from engram.hosts.prompt_index import terms
from engram.models import Chunk
from engram.protocols import embedder_identity
from engram.search import HybridSearcher, tokenize
from engram.text.stopwords import STOPWORDS, keyword_query

NOTES = {
    "pool": "The connection pool size is 20 per worker.",
    "weekend": "What did I do on the weekend? I went to the lake with my sister.",
    "question": "Where is it, and who was there when it was decided?",
}


def _store(embedder: HashEmbedder) -> MemoryStore:
    store = MemoryStore()
    store.set_identity(embedder_identity(embedder, "chunker"))
    vectors = embedder.embed(list(NOTES.values()))
    store.upsert(
        [
            Chunk(id=name, document_id=f"{name}.md", text=text, vector=vector)
            for (name, text), vector in zip(NOTES.items(), vectors, strict=True)
        ]
    )
    return store


def test_stop_words_are_blanked_and_the_rest_kept_as_typed() -> None:
    assert tokenize(keyword_query("What is the pool size?")) == ["pool", "size"]
    assert keyword_query("what's pg_ctl doing") == " 's pg_ctl doing"
    assert keyword_query("e-mail the boss") == "e-mail   boss"
    assert keyword_query("東京 の 天気") == "東京 の 天気"


def test_a_stop_word_in_capitals_is_a_name_and_kept() -> None:
    assert tokenize(keyword_query("What is the US office address?")) == ["us", "office", "address"]
    assert tokenize(keyword_query("who runs IT here")) == ["runs", "it", "here"]
    # A query in capitals throughout says nothing by its case: its stop words go.
    assert tokenize(keyword_query("WHAT IS THE POOL SIZE")) == ["pool", "size"]
    assert tokenize(keyword_query("I")) == ["i"]


def test_a_query_of_stop_words_only_is_searched_whole() -> None:
    assert keyword_query("who was there") == "who was there"
    assert keyword_query("the _ ?") == "the _ ?"


words = st.one_of(st.sampled_from(sorted(STOPWORDS)), st.text(min_size=1, max_size=8))


@given(st.lists(words, max_size=12).map(" ".join))
def test_the_keyword_query_keeps_only_the_querys_own_words(query: str) -> None:
    """Never a word the user did not type, never nothing when the query had words, and the
    same answer when asked twice."""
    kept = keyword_query(query)
    original = tokenize(query)
    assert set(tokenize(kept)) <= set(original)
    assert bool(tokenize(kept)) == bool(original)
    assert keyword_query(kept) == kept


def test_keyword_search_ranks_the_subject_not_the_question_words(
    embedder: HashEmbedder,
) -> None:
    store = _store(embedder)
    searcher = HybridSearcher(SearchConfig(min_score=0.0))
    query = "What is the pool size of each worker?"
    found = searcher.search(query, store, None, mode="keyword")
    # The notes sharing only "what", "is", "the", "of" are no keyword match at all.
    assert [h.chunk.id for h in found.hits] == ["pool"]
    fused = searcher.search(query, store, embedder, mode="hybrid")
    assert fused.hits[0].chunk.id == "pool"
    assert fused.query == query  # the result still names what the user asked


def test_stop_words_alone_still_find_the_notes_that_have_them(embedder: HashEmbedder) -> None:
    found = HybridSearcher(SearchConfig(min_score=0.0)).search(
        "who was there", _store(embedder), None, mode="keyword"
    )
    assert [h.chunk.id for h in found.hits] == ["question"]


def test_the_prompt_hooks_index_drops_the_same_words() -> None:
    """One list: the per-prompt hook's keyword index and hybrid search agree on what counts."""
    query = "What is the pool size of each worker?"
    assert terms(query) == [w for w in tokenize(keyword_query(query)) if len(w) > 1]
