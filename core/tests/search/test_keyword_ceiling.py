"""The keyword ceiling (``engram.KeywordCeiling``) and the fusion scale built on it: a keyword
score divided by the score a chunk holding each query word once would get, so a long request
that shares one common word with a note brings that note a small keyword part, and a question
whose rare words a note holds all of brings it the whole of it (issue 39, PrefEval)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import SearchConfig
from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore
from engram.errors import StoreError
from engram.models import Chunk, Hit
from engram.protocols import embedder_identity
from engram.search import HybridSearcher
from engram.search.fusion import fuse_weighted

_VOCABULARY = [f"w{i}" for i in range(30)]


@settings(max_examples=80, deadline=None)
@given(
    data=st.data(),
    length=st.integers(2, 6),
    others=st.integers(1, 12),
)
def test_the_ceiling_is_the_score_of_an_average_chunk_holding_each_word_once(
    data: st.DataObject, length: int, others: int
) -> None:
    """With every chunk ``length`` words long, the chunk holding each query word once scores
    exactly the query's ceiling, whatever the rest of the corpus holds."""
    words = st.lists(st.sampled_from(_VOCABULARY), min_size=length, max_size=length)
    target = data.draw(
        st.lists(st.sampled_from(_VOCABULARY), min_size=length, max_size=length, unique=True)
    )
    asked = data.draw(st.lists(st.sampled_from(target), min_size=1, unique=True))
    store = MemoryStore()
    store.upsert(
        [Chunk(id="target", document_id="t", text=" ".join(target))]
        + [
            Chunk(id=f"c{i}", document_id=f"c{i}", text=" ".join(data.draw(words)))
            for i in range(others)
        ]
    )
    query = " ".join(asked)
    score = next(h.score for h in store.keyword_search(query, others + 1) if h.chunk.id == "target")
    assert store.keyword_ceiling(query) == pytest.approx(score, rel=1e-9)
    assert store.keyword_ceiling(query + " unheard") == pytest.approx(score, rel=1e-9)
    assert store.keyword_ceiling("unheard") is None


def _hit(name: str, score: float, *, keyword: bool = False) -> Hit:
    chunk = Chunk(id=name, document_id=name, text=name)
    return Hit(chunk=chunk, score=score, keyword_score=score if keyword else None)


def test_the_ceiling_scale_divides_each_keyword_score_by_the_ceiling() -> None:
    vector = [_hit("a", 0.5), _hit("b", 0.4)]
    keyword = [_hit("b", 2.0, keyword=True), _hit("c", 1.0, keyword=True)]
    fused = {
        h.chunk.id: h.score
        for h in fuse_weighted(vector, keyword, 0.5, 0.5, "ceiling", ceiling=8.0)
    }
    assert fused["a"] == pytest.approx(0.5 * 0.5)
    assert fused["b"] == pytest.approx(0.5 * 0.4 + 0.5 * 2.0 / 8.0)
    assert fused["c"] == pytest.approx(0.5 * 1.0 / 8.0)  # no cosine known: counts 0
    capped = fuse_weighted(vector, keyword, 0.5, 0.5, "ceiling", ceiling=1.0)
    assert max(h.score for h in capped) <= 1.0


def test_without_a_ceiling_the_scale_is_relative() -> None:
    vector = [_hit("a", 0.5), _hit("b", 0.4)]
    keyword = [_hit("b", 2.0, keyword=True), _hit("c", 1.0, keyword=True)]
    ceiling = fuse_weighted(vector, keyword, 0.5, 0.5, "ceiling", ceiling=None)
    relative = fuse_weighted(vector, keyword, 0.5, 0.5, "relative")
    assert [(h.chunk.id, h.score) for h in ceiling] == [(h.chunk.id, h.score) for h in relative]


NOTES = {
    "movies": "I do not enjoy animated movies at all.",
    "comedies": "Romantic comedies bore me; their plots are predictable.",
    "deploy": "Deploys roll back with make rollback on the staging cluster.",
    # Each of these holds one other word of the request below, as a vault's notes do.
    "rain": "Rainy days need a good raincoat.",
    "friday": "The weekend starts on Friday evening.",
    "june": "Old friends visit us in June.",
    "socks": "Cozy wool socks keep feet warm.",
    "runners": "Marathon runners train for months.",
    "manual": "I suggest reading the manual first.",
}


def _store(embedder: HashEmbedder, notes: dict[str, str]) -> MemoryStore:
    store = MemoryStore()
    store.set_identity(embedder_identity(embedder, "test"))
    texts = list(notes.values())
    store.upsert(
        [
            Chunk(id=name, document_id=f"{name}.md", text=text, vector=vector)
            for name, text, vector in zip(notes, texts, embedder.embed(texts), strict=True)
        ]
    )
    return store


def _scores(scale: str, query: str) -> dict[str, float]:
    embedder = HashEmbedder(HashEmbedderOptions())
    config = SearchConfig(keyword_scale=scale, min_score=0.0, keyword_standout_floor=1.0)
    found = HybridSearcher(config).search(query, _store(embedder, NOTES), embedder, limit=20)
    return {h.chunk.id: h.score - 0.5 * max(0.0, h.vector_score or 0.0) for h in found.hits}


def test_a_long_request_sharing_one_word_brings_a_small_keyword_part() -> None:
    """Every note shares one word with the request: relative to the best keyword hit, one of
    them takes the whole keyword weight (0.5); over the ceiling each takes about a seventh."""
    request = "Which movies would you suggest for a cozy rainy weekend marathon with friends?"
    relative, ceiling = _scores("relative", request), _scores("ceiling", request)
    assert max(relative.values()) == pytest.approx(0.5)
    assert 0 < ceiling["movies"] < 0.1
    assert max(ceiling.values()) < 0.1


def test_a_note_holding_every_rare_word_of_a_question_keeps_the_whole_part() -> None:
    question = "deploys rollback staging"
    assert _scores("ceiling", question)["deploy"] == pytest.approx(
        _scores("relative", question)["deploy"], rel=0.25
    )


class _BrokenCeiling(MemoryStore):
    """A third-party store whose ceiling is a raw, negative FTS5 rank."""

    def keyword_ceiling(self, query: str) -> float | None:
        return -3.0


def test_a_negative_ceiling_is_a_store_bug_and_raises() -> None:
    embedder = HashEmbedder(HashEmbedderOptions())
    store = _BrokenCeiling()
    store.set_identity(embedder_identity(embedder, "test"))
    store.upsert(
        [Chunk(id="n", document_id="n.md", text="movies", vector=embedder.embed(["movies"])[0])]
    )
    with pytest.raises(StoreError, match=r"keyword_ceiling returned -3\.0"):
        HybridSearcher().search("movies", store, embedder)
