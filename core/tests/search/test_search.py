"""Tokenizer, score fusion and the default hybrid searcher over the real memory store."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engram.config import SearchConfig
from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore
from engram.errors import (
    CapabilityError,
    ConfigError,
    EmbedderError,
    EmptyQuery,
    IdentityMismatch,
    MissingKeyError,
    StoreError,
)
from engram.filters import Contains, Eq
from engram.models import Chunk, Hit, IndexIdentity, InputType
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Searcher, StoreCapability, embedder_identity
from engram.search import (
    HybridSearcher,
    SearcherOptions,
    balance_weights,
    fuse_rrf,
    fuse_weighted,
    keyword_standout,
    normalize_keyword,
    passes_min_score,
    tokenize,
)


def hit(chunk_id: str, score: float) -> Hit:
    return Hit(chunk=Chunk(id=chunk_id, document_id="doc", text=chunk_id), score=score)


def ids(hits: Sequence[Hit]) -> list[str]:
    return [h.chunk.id for h in hits]


class FailingEmbedder:
    """An embedder whose provider is unreachable: the network edge, as a real class."""

    name = "remote"
    model = "remote-embed-1"
    dimension = 256

    def __init__(self, error: Exception) -> None:
        self.error = error

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        raise self.error


class FixedEmbedder:
    """Maps known texts to given vectors; anything else gets ``default``."""

    name = "fixed"
    model = "fixed-1"

    def __init__(self, vectors: dict[str, list[float]], default: list[float]) -> None:
        self.vectors = vectors
        self.default = default
        self.dimension = len(default)

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        return [list(self.vectors.get(t, self.default)) for t in texts]


class VectorOnlyStore(MemoryStore):
    """A store that declares no keyword search (like a pure vector database)."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset({"vector", "filter"})


class UnfilteredStore(MemoryStore):
    """A store that declares no metadata filtering."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset({"vector", "keyword"})


def searcher(**options: object) -> HybridSearcher:
    return HybridSearcher(SearchConfig.model_validate(options))


# tokenizer


def test_tokenize_lowercases_and_splits_on_punctuation_and_underscores() -> None:
    assert tokenize("Hello, WORLD! snake_case x2 3.14") == [
        "hello",
        "world",
        "snake",
        "case",
        "x2",
        "3",
        "14",
    ]


def test_tokenize_keeps_accented_and_indic_words_whole_and_splits_cjk() -> None:
    assert tokenize("Café naïve हिन्दी") == ["café", "naïve", "हिन्दी"]
    assert tokenize("東京タワー abc") == ["東", "京", "タ", "ワ", "ー", "abc"]
    full_width = "\uff21\uff22\uff23\uff11\uff12\uff13"  # "ABC123" in full-width forms
    assert tokenize(full_width) == ["abc123"]


def test_tokenize_finds_no_words_in_punctuation() -> None:
    assert tokenize("") == []
    assert tokenize(" ?!... -- ___ \n") == []


# normalize_keyword


def test_normalize_keyword_maps_positive_relevance_into_zero_one() -> None:
    assert normalize_keyword(0.0) == 0.0
    assert normalize_keyword(1.0) == 0.5
    assert normalize_keyword(3.0) == 0.75
    assert 0.0 < normalize_keyword(1e-9) < 1e-8
    assert normalize_keyword(1e12) < 1.0


@pytest.mark.parametrize("raw", [-0.5, -3.2, float("nan"), float("inf")])
def test_normalize_keyword_refuses_raw_ranks_instead_of_clamping(raw: float) -> None:
    with pytest.raises(StoreError, match="return -r"):
        normalize_keyword(raw)


# fusion


def test_weighted_fusion_by_hand() -> None:
    """Relative keyword scale (the default): BM25 over the query's best BM25."""
    fused = fuse_weighted(
        [hit("a", 0.9), hit("b", 0.5), hit("neg", -0.4)],
        [hit("b", 3.0), hit("c", 1.0)],
    )
    scores = {h.chunk.id: h.score for h in fused}
    assert scores == pytest.approx(
        {"a": 0.7 * 0.9, "b": 0.7 * 0.5 + 0.3 * 1.0, "c": 0.3 / 3, "neg": 0.0}
    )
    assert ids(fused) == ["b", "a", "c", "neg"]  # 0.65 > 0.63
    by_id = {h.chunk.id: h for h in fused}
    assert (by_id["b"].vector_score, by_id["b"].keyword_score) == (0.5, 3.0)
    assert (by_id["a"].keyword_score, by_id["c"].vector_score) == (None, None)


def test_weighted_fusion_with_the_saturating_keyword_scale_by_hand() -> None:
    fused = fuse_weighted(
        [hit("a", 0.9), hit("b", 0.5)], [hit("b", 3.0), hit("c", 1.0)], 0.7, 0.3, "saturating"
    )
    scores = {h.chunk.id: h.score for h in fused}
    assert scores == pytest.approx({"a": 0.7 * 0.9, "b": 0.7 * 0.5 + 0.3 * 0.75, "c": 0.3 * 0.5})
    with pytest.raises(ConfigError, match="keyword_scale"):
        fuse_weighted([hit("a", 0.9)], [], 0.7, 0.3, "linear")  # type: ignore[arg-type]


def test_weighted_fusion_renormalises_weights() -> None:
    vector_hits, keyword_hits = [hit("a", 0.8), hit("b", 0.2)], [hit("b", 9.0)]
    standard = fuse_weighted(vector_hits, keyword_hits, 0.7, 0.3)
    scaled = fuse_weighted(vector_hits, keyword_hits, 7.0, 3.0)
    assert ids(scaled) == ids(standard)
    assert [h.score for h in scaled] == pytest.approx([h.score for h in standard])
    only_keyword = fuse_weighted(vector_hits, keyword_hits, 0.0, 2.0)
    assert only_keyword[0].chunk.id == "b"
    assert only_keyword[0].score == pytest.approx(1.0)  # the best keyword hit
    saturating = fuse_weighted(vector_hits, keyword_hits, 0.0, 2.0, "saturating")
    assert saturating[0].score == pytest.approx(0.9)


@pytest.mark.parametrize(
    ("wv", "wk", "pattern"),
    [(0.0, 0.0, "both 0"), (-0.1, 0.5, "vector_weight"), (0.5, float("nan"), "keyword_weight")],
)
def test_weighted_fusion_rejects_bad_weights(wv: float, wk: float, pattern: str) -> None:
    with pytest.raises(ConfigError, match=pattern):
        fuse_weighted([hit("a", 1.0)], [], wv, wk)


def test_rrf_by_hand() -> None:
    fused = fuse_rrf([hit("a", 0.9), hit("b", 0.8)], [hit("b", 5.0), hit("c", 2.0)], k=60)
    scores = {h.chunk.id: h.score for h in fused}
    assert scores == pytest.approx({"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 62})
    assert ids(fused) == ["b", "a", "c"]
    assert (fused[0].vector_score, fused[0].keyword_score) == (0.8, 5.0)
    with pytest.raises(ConfigError, match="rrf_k"):
        fuse_rrf([], [], k=-1)


def test_fusion_keeps_the_first_place_of_a_repeated_id() -> None:
    fused = fuse_rrf([hit("a", 0.9), hit("a", 0.1)], [], k=0)
    assert [(h.chunk.id, h.score, h.vector_score) for h in fused] == [("a", 1.0, 0.9)]


_id = st.sampled_from(list("abcdefgh"))
_vector_hits = st.lists(st.tuples(_id, st.floats(-1.0, 1.0)), max_size=8, unique_by=lambda p: p[0])
_keyword_hits = st.lists(
    st.tuples(_id, st.floats(0.0, 1e9, allow_subnormal=True)), max_size=8, unique_by=lambda p: p[0]
)


def _hits(pairs: list[tuple[str, float]]) -> list[Hit]:
    return [hit(i, s) for i, s in pairs]


def _check_order(fused: list[Hit], expected_ids: set[str]) -> None:
    assert len(fused) == len(expected_ids)
    assert set(ids(fused)) == expected_ids
    keys = [(-h.score, h.chunk.id) for h in fused]
    assert keys == sorted(keys)


@settings(max_examples=60, deadline=None)
@given(
    vector=_vector_hits,
    keyword=_keyword_hits,
    wv=st.floats(0.0, 10.0),
    wk=st.floats(0.0, 10.0),
)
def test_weighted_scores_are_in_zero_one_and_ordered(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], wv: float, wk: float
) -> None:
    assume(wv + wk > 0)
    fused = fuse_weighted(_hits(vector), _hits(keyword), wv, wk)
    assert all(0.0 <= h.score <= 1.0 for h in fused)
    _check_order(fused, {i for i, _ in vector} | {i for i, _ in keyword})
    raw_vector, raw_keyword = dict(vector), dict(keyword)
    for h in fused:
        assert h.vector_score == raw_vector.get(h.chunk.id)
        assert h.keyword_score == raw_keyword.get(h.chunk.id)


@settings(max_examples=60, deadline=None)
@given(vector=_vector_hits, keyword=_keyword_hits, k=st.integers(0, 100))
def test_rrf_scores_follow_ranks(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], k: int
) -> None:
    fused = fuse_rrf(_hits(vector), _hits(keyword), k=k)
    _check_order(fused, {i for i, _ in vector} | {i for i, _ in keyword})
    assert all(0.0 < h.score <= 2 / (k + 1) for h in fused)
    if vector and keyword and vector[0][0] == keyword[0][0]:
        assert fused[0].chunk.id == vector[0][0]
    only_vector = [h for h in fused if h.keyword_score is None]
    assert [h.chunk.id for h in only_vector] == [i for i, _ in vector if i not in dict(keyword)]


@settings(max_examples=60, deadline=None)
@given(vector=_vector_hits, keyword=_keyword_hits)
def test_a_better_vector_score_never_lowers_a_weighted_rank_score(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]]
) -> None:
    assume(vector)
    chunk_id, score = vector[0]
    better = [(chunk_id, min(1.0, score + 0.25)), *vector[1:]]
    before = {h.chunk.id: h.score for h in fuse_weighted(_hits(vector), _hits(keyword))}
    after = {h.chunk.id: h.score for h in fuse_weighted(_hits(better), _hits(keyword))}
    assert after[chunk_id] >= before[chunk_id]
    assert {i: s for i, s in after.items() if i != chunk_id} == {
        i: s for i, s in before.items() if i != chunk_id
    }


@settings(max_examples=60, deadline=None)
@given(
    vector=_vector_hits,
    keyword=st.lists(
        st.tuples(st.sampled_from(list("abcdefgh")), st.floats(1e-3, 1e6)),
        min_size=1,
        max_size=8,
        unique_by=lambda p: p[0],
    ),
    factor=st.floats(1e-3, 1e3),
)
def test_relative_keyword_scale_ignores_the_corpus_size_of_bm25(
    vector: list[tuple[str, float]], keyword: list[tuple[str, float]], factor: float
) -> None:
    """BM25 magnitudes grow with the corpus; multiplying every keyword score by one factor (a
    bigger corpus, a longer query) leaves the fused ranking and scores unchanged, and the best
    keyword hit always gets the whole keyword weight."""
    scaled = [(i, s * factor) for i, s in keyword]
    before = fuse_weighted(_hits(vector), _hits(keyword))
    after = fuse_weighted(_hits(vector), _hits(scaled))
    assert [h.score for h in after] == pytest.approx([h.score for h in before], abs=1e-9)
    best = max(keyword, key=lambda p: p[1])[0]
    cosine = min(1.0, max(0.0, dict(vector).get(best, 0.0)))
    assert {h.chunk.id: h.score for h in before}[best] == pytest.approx(0.7 * cosine + 0.3)


# the searcher


def test_default_searcher_is_registered_with_the_search_config() -> None:
    entry = build_registry(get_plugin_manager(load_entry_points=False)).get("searcher", "default")
    assert entry.options is SearchConfig is SearcherOptions
    built = entry.build(SearchConfig(fusion="rrf"))
    assert isinstance(built, HybridSearcher)
    assert isinstance(built, Searcher)
    assert built.name == "default"
    assert built.options.fusion == "rrf"


def test_hybrid_search_puts_the_relevant_note_first(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    result = searcher(min_score=0.0).search("docker kubernetes deploy", notes_store, embedder)
    assert result.mode == "hybrid"
    assert not result.degraded
    assert result.warnings == []
    top = result.hits[0]
    assert top.chunk.id == "deploy"
    assert top.vector_score is not None
    assert top.keyword_score is not None
    assert top.keyword_score > 0
    assert 0.0 < top.score <= 1.0


def test_min_score_shows_the_ranking_once_the_best_hit_clears_it(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    """min_score asks "did the search find anything?": once the best hit clears it the ranking
    is shown whole, weak tail included (a request's relevant note can sit below the bar while
    the best hits clear it; issue 39, PrefEval)."""
    loose = searcher(min_score=0.0).search("timeout error", notes_store, embedder, limit=5)
    strict = searcher(min_score=0.3).search("timeout error", notes_store, embedder, limit=5)
    assert len(loose.hits) == 5
    assert ids(strict.hits)[0] == "bug" and passes_min_score(strict.hits[0], 0.3)
    assert not all(passes_min_score(h, 0.3) for h in strict.hits)  # a weak tail is shown
    assert ids(strict.hits) == ids(loose.hits)


def test_min_score_shows_only_keyword_matches_when_nothing_clears_it(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    """Below the bar a hybrid search shows what keyword mode shows (every match) and nothing
    the vector side found alone; vector mode shows nothing."""
    query = "timeout error"
    high = searcher(min_score=1.0)
    keyword = high.search(query, notes_store, embedder, mode="keyword")
    hybrid = high.search(query, notes_store, embedder, mode="hybrid")
    assert keyword.hits and max(h.score for h in hybrid.hits) < 1.0
    assert ids(hybrid.hits) and set(ids(hybrid.hits)) == set(ids(keyword.hits))
    assert all(h.keyword_score is not None for h in hybrid.hits)
    assert high.search(query, notes_store, embedder, mode="vector").hits == []


_WORDS = ["cat", "dog", "coffee", "deploy", "sofa", "tea", "python", "error", "sleep", "sun"]


@given(
    vector=st.lists(st.floats(-1.0, 1.0), max_size=30),
    keyword=st.lists(st.floats(0.0, 1.0), max_size=30),
    wv=st.floats(0.01, 10.0),
    wk=st.floats(0.01, 10.0),
)
def test_balanced_weights_are_shares_of_one(
    vector: list[float], keyword: list[float], wv: float, wk: float
) -> None:
    a, b = balance_weights(vector, keyword, wv, wk)
    assert 0.0 <= a <= 1.0 and 0.0 <= b <= 1.0
    assert a + b == pytest.approx(1.0)


def test_balance_leaves_the_ranking_to_the_side_that_stands_out() -> None:
    # No keyword hit: the vector side alone (hybrid ranks and scores as vector mode).
    assert balance_weights([0.5, 0.4], [], 0.6, 0.4) == (1.0, 0.0)
    assert balance_weights([], [1.0, 0.2], 0.6, 0.4) == (0.0, 1.0)
    # Stray words that match every candidate alike: nothing to rank by on the keyword side.
    assert balance_weights([0.6, 0.5, 0.45], [1.0, 1.0, 1.0], 0.6, 0.4) == (1.0, 0.0)
    # One keyword hit towering over many near-misses outranks close cosines, and the reverse.
    close = [hit(f"v{i}", 0.50 - 0.006 * i) for i in range(6)]
    towering = [hit("v5", 20.0)] + [hit(f"k{i}", 1.0) for i in range(20)]
    assert ids(fuse_weighted(close, towering, 0.6, 0.4, balance="standout"))[0] == "v5"
    clear = [hit("a", 0.9)] + [hit(f"v{i}", 0.3) for i in range(20)]
    flat = [hit(f"v{i}", s) for i, s in enumerate([10.0, 9.5, 9.0, 9.0, 8.5])]
    assert ids(fuse_weighted(clear, flat, 0.6, 0.4, balance="standout"))[0] == "a"
    # Too few hits to measure a spread: the configured weights.
    assert balance_weights([0.5], [1.0, 0.5], 0.6, 0.4) == pytest.approx((0.6, 0.4))


@given(vector=_vector_hits)
def test_standout_balance_without_keyword_hits_is_vector_mode(
    vector: list[tuple[str, float]],
) -> None:
    fused = fuse_weighted(_hits(vector), [], 0.6, 0.4, balance="standout")
    expected = sorted(((-max(0.0, s), i) for i, s in vector))
    assert [(-h.score, h.chunk.id) for h in fused] == expected


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(
        st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map(" ".join),
        min_size=1,
        max_size=12,
    ),
    query=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=3).map(" ".join),
    min_score=st.floats(0.0, 1.0),
)
def test_hybrid_keeps_every_hit_either_single_mode_shows(
    texts: list[str], query: str, min_score: float
) -> None:
    """Hybrid's cut never hides what vector mode (the ranking, once its best cosine clears
    min_score) or keyword mode (every match: it has no cut) shows, issue 39 point 10; it shows
    a hit below the bar only when its best hit clears it, or the keyword side matched it."""
    embedder = HashEmbedder(HashEmbedderOptions())
    store = MemoryStore()
    store.set_identity(embedder_identity(embedder, "test"))
    vectors = embedder.embed(texts)
    store.upsert(
        [
            Chunk(id=f"n{i}", document_id=f"n{i}.md", text=text, vector=vector)
            for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
        ]
    )
    options = {"min_score": min_score, "limit": len(texts), "candidate_multiplier": 1}
    vector = searcher(**options).search(query, store, embedder, mode="vector")
    keyword = searcher(**options).search(query, store, embedder, mode="keyword")
    hybrid = searcher(**options).search(query, store, embedder, mode="hybrid")
    assert set(ids(vector.hits)) <= set(ids(hybrid.hits))
    assert set(ids(keyword.hits)) <= set(ids(hybrid.hits))
    cleared = any(h.score >= min_score or (h.vector_score or 0) >= min_score for h in hybrid.hits)
    assert cleared or all(h.keyword_score is not None for h in hybrid.hits)


def test_a_keyword_match_passes_the_cut_whatever_its_scores() -> None:
    chunk = Chunk(id="turn", document_id="d", text="I graduated in Business Administration")
    matched = Hit(chunk=chunk, score=0.05, vector_score=0.1, keyword_score=0.4)
    unmatched = Hit(chunk=chunk, score=0.05, vector_score=0.1)
    assert passes_min_score(matched, 0.35)
    assert not passes_min_score(unmatched, 0.35)


def test_limit_caps_the_hits(notes_store: MemoryStore, embedder: HashEmbedder) -> None:
    result = searcher(min_score=0.0).search("the", notes_store, embedder, limit=2)
    assert len(result.hits) == 2
    with pytest.raises(ConfigError, match="at least 1"):
        searcher().search("the", notes_store, embedder, limit=0)


def test_keyword_mode_returns_normalised_bm25(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    raw = notes_store.keyword_search("coffee sugar", 5)
    result = searcher(min_score=0.0).search("coffee sugar", notes_store, None, mode="keyword")
    assert result.mode == "keyword"
    assert ids(result.hits) == ids(raw) == ["coffee"]
    assert result.hits[0].score == pytest.approx(raw[0].score / (1 + raw[0].score))
    assert result.hits[0].keyword_score == raw[0].score


def test_vector_mode_returns_cosine(notes_store: MemoryStore, embedder: HashEmbedder) -> None:
    query = "The user prefers dark roast coffee without sugar in the morning."
    result = searcher().search(query, notes_store, embedder, mode="vector")
    assert result.mode == "vector"
    assert result.hits[0].chunk.id == "coffee"
    assert result.hits[0].score == pytest.approx(1.0)
    assert result.hits[0].vector_score == result.hits[0].score
    scores = [h.score for h in result.hits]
    assert scores == sorted(scores, reverse=True)
    unrelated = searcher().search("zebra quantum", notes_store, embedder, mode="vector")
    assert unrelated.hits == []  # nothing clears min_score: nothing is shown


def test_mode_and_limit_default_to_the_options(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    result = searcher(mode="keyword", limit=1, min_score=0.0).search("the", notes_store, embedder)
    assert result.mode == "keyword"
    assert len(result.hits) == 1


def test_rrf_scores_are_not_cut_by_min_score(
    notes_store: MemoryStore, embedder: HashEmbedder
) -> None:
    result = searcher(fusion="rrf", min_score=0.9).search("timeout", notes_store, embedder)
    assert result.hits
    assert result.hits[0].chunk.id == "bug"
    assert all(h.score < 0.9 for h in result.hits)
    assert result.hits[0].score == pytest.approx(2 / 61)


def test_filters_apply_to_both_sides(notes_store: MemoryStore, embedder: HashEmbedder) -> None:
    only_dev = Contains(field="tags", value="dev")
    result = searcher(min_score=0.0).search(
        "deploy docker timeout python", notes_store, embedder, limit=5, filter=only_dev
    )
    assert set(ids(result.hits)) <= {"python", "sqlite", "bug"}
    assert "deploy" not in ids(result.hits)
    assert ids(result.hits)


@pytest.mark.parametrize("query", ["", "   ", "?!", "...---", "___"])
def test_queries_without_words_raise_empty_query(
    notes_store: MemoryStore, embedder: HashEmbedder, query: str
) -> None:
    with pytest.raises(EmptyQuery, match="no words to search for"):
        searcher().search(query, notes_store, embedder)


def test_failing_embedder_degrades_hybrid_to_keyword(notes_store: MemoryStore) -> None:
    failing = FailingEmbedder(ConnectionError("connection refused by 127.0.0.1:9"))
    failing.name, failing.model = "hash", "feature-hash-v1"
    result = searcher(min_score=0.0).search("coffee", notes_store, failing)
    assert result.degraded
    assert result.mode == "keyword"
    assert ids(result.hits) == ["coffee"]
    (warning,) = result.warnings
    assert "hash/feature-hash-v1" in warning
    assert "ConnectionError" in warning
    assert "connection refused" in warning


def test_missing_key_also_degrades_hybrid(notes_store: MemoryStore) -> None:
    failing = FailingEmbedder(MissingKeyError("set REMOTE_API_KEY"))
    failing.name, failing.model = "hash", "feature-hash-v1"
    result = searcher(min_score=0.0).search("coffee", notes_store, failing)
    assert result.degraded
    assert "REMOTE_API_KEY" in result.warnings[0]


def test_no_embedder_degrades_hybrid_to_keyword(notes_store: MemoryStore) -> None:
    result = searcher(min_score=0.0).search("coffee", notes_store, None)
    assert result.degraded
    assert result.mode == "keyword"
    assert ids(result.hits) == ["coffee"]
    assert "no embedder" in result.warnings[0]


def test_vector_mode_with_a_failing_embedder_raises(store: MemoryStore) -> None:
    failing = FailingEmbedder(ConnectionError("connection refused"))
    with pytest.raises(
        EmbedderError, match=r"remote/remote-embed-1 failed: ConnectionError"
    ) as info:
        searcher().search("coffee", store, failing, mode="vector")
    assert isinstance(info.value.__cause__, ConnectionError)
    with pytest.raises(EmbedderError, match="needs an embedder"):
        searcher().search("coffee", store, None, mode="vector")


def test_embedder_returning_garbage_is_an_embedder_error(store: MemoryStore) -> None:
    wrong = FixedEmbedder({}, default=[1.0, 0.0])
    wrong.dimension = 3
    with pytest.raises(EmbedderError, match="returned a 2-dim vector but declares 3"):
        searcher().search("coffee", store, wrong, mode="vector")


def test_vector_only_store_gives_vector_results_with_a_warning(embedder: HashEmbedder) -> None:
    store = VectorOnlyStore()
    store.set_identity(
        IndexIdentity(embedder="hash", model="feature-hash-v1", dimension=256, chunker="md")
    )
    texts = {"tea": "green tea in the afternoon", "car": "the car needs new tyres"}
    vectors = embedder.embed(list(texts.values()))
    store.upsert(
        [
            Chunk(id=i, document_id=i, text=t, vector=v)
            for (i, t), v in zip(texts.items(), vectors, strict=True)
        ]
    )
    result = searcher(min_score=0.0).search("green tea", store, embedder)
    assert result.mode == "vector"
    assert not result.degraded
    assert "no keyword search" in result.warnings[0]
    assert result.hits[0].chunk.id == "tea"
    with pytest.raises(CapabilityError, match="no keyword search"):
        searcher().search("green tea", store, embedder, mode="keyword")


def test_filter_on_a_store_without_filters_is_a_capability_error(
    embedder: HashEmbedder,
) -> None:
    with pytest.raises(CapabilityError, match="cannot filter"):
        searcher().search("x", UnfilteredStore(), embedder, filter=Eq(field="a", value=1))


def test_an_embedder_other_than_the_index_one_is_refused(notes_store: MemoryStore) -> None:
    other = HashEmbedder(HashEmbedderOptions(dimension=64))
    with pytest.raises(IdentityMismatch, match=r"hash/feature-hash-v1 \(256 dims.*64 dims"):
        searcher().search("coffee", notes_store, other)
    impostor = FixedEmbedder({}, default=[0.0] * 256)
    with pytest.raises(IdentityMismatch, match="fixed/fixed-1"):
        searcher().search("coffee", notes_store, impostor, mode="vector")


def test_keyword_evidence_lifts_a_vector_runner_up_even_past_the_pool(store: MemoryStore) -> None:
    # "a" is the best vector match but lacks the word; "b" is a close second and has it. With a
    # pool of one, the vector side never returns "b", but "b" still gets its true cosine (0.95)
    # from its stored vector instead of 0, so the keyword evidence lifts it either way.
    store.set_identity(IndexIdentity(embedder="fixed", model="fixed-1", dimension=2, chunker="md"))
    store.upsert(
        [
            Chunk(id="a", document_id="a", text="nothing relevant", vector=[1.0, 0.0]),
            Chunk(id="b", document_id="b", text="zebra facts", vector=[0.95, 0.31]),
            Chunk(id="c", document_id="c", text="other", vector=[0.0, 1.0]),
        ]
    )
    query_embedder = FixedEmbedder({}, default=[1.0, 0.0])
    narrow = searcher(candidate_multiplier=1, min_score=0.0)
    wide = searcher(candidate_multiplier=2, min_score=0.0)
    [hit] = narrow.search("zebra", store, query_embedder, limit=1).hits
    assert hit.chunk.id == "b" and hit.vector_score == pytest.approx(
        0.95 / (0.95**2 + 0.31**2) ** 0.5
    )
    assert ids(wide.search("zebra", store, query_embedder, limit=1).hits) == ["b"]


def test_keyword_standout_measures_how_far_the_best_hit_rises() -> None:
    assert keyword_standout([]) == 1.0 and keyword_standout([3.0]) == 1.0
    assert keyword_standout([5.0, 5.0, 5.0]) == 0.0
    assert keyword_standout([10.0, 1.0, 1.0]) == pytest.approx(0.6)


def test_junk_only_keyword_hits_weigh_little() -> None:
    """Stray words that match three chunks equally must not outrank a good vector match: with
    the fixed weights they did (0.4 > 0.6 * 0.6), scaled by their standout they weigh 0.14."""
    vector_hits = [hit("good", 0.6), hit("ok", 0.5)]
    junk = [hit("j1", 5.0), hit("j2", 5.0), hit("j3", 5.0)]
    fixed = fuse_weighted(vector_hits, junk, 0.6, 0.4)
    assert fixed[0].chunk.id == "j1"
    scaled = fuse_weighted(vector_hits, junk, 0.6, 0.4, standout_floor=0.35)
    assert [h.chunk.id for h in scaled[:2]] == ["good", "ok"]
    assert scaled[2].score == pytest.approx(0.4 * 0.35)
    telling = [hit("ok", 9.0), hit("j2", 1.0), hit("j3", 1.0)]  # one hit towers: full weight
    assert fuse_weighted(vector_hits, telling, 0.6, 0.4, standout_floor=0.35)[0].chunk.id == "ok"


def test_a_keyword_only_hit_gets_its_true_cosine_when_its_vector_is_known() -> None:
    near = Hit(chunk=Chunk(id="k", document_id="d", text="k", vector=[3.0, 4.0]), score=2.0)
    [fused] = fuse_weighted([], [near], 0.5, 0.5, query_vector=[1.0, 0.0])
    assert fused.vector_score == pytest.approx(0.6)
    assert fused.score == pytest.approx(0.5 * 0.6 + 0.5 * 1.0)
    [unknown] = fuse_weighted([], [near], 0.5, 0.5)  # no query vector: the old 0
    assert unknown.vector_score is None and unknown.score == pytest.approx(0.5)
