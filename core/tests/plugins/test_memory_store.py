"""The in-memory reference store: the Store contract, exact cosine and exact BM25."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.errors import DimensionMismatch, IdentityMismatch, InvalidVector, StoreError
from engram.filters import Contains, Eq, Range
from engram.models import Chunk, Document, Hit, IndexIdentity, Metadata
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Store


def make_chunk(
    chunk_id: str,
    text: str = "",
    vector: Sequence[float] | None = None,
    metadata: Metadata | None = None,
    document_id: str | None = None,
) -> Chunk:
    return Chunk(
        id=chunk_id,
        document_id=document_id or f"doc-{chunk_id}",
        text=text,
        vector=list(vector) if vector is not None else None,
        metadata=metadata or {},
    )


def identity_for(dimension: int, model: str = "test-model") -> IndexIdentity:
    return IndexIdentity(embedder="test", model=model, dimension=dimension, chunker="markdown")


def _ids(hits: list[Hit]) -> list[str]:
    return [h.chunk.id for h in hits]


def test_memory_store_satisfies_the_store_protocol(store: MemoryStore) -> None:
    assert isinstance(store, Store)
    assert MemoryStore.capabilities == frozenset({"vector", "keyword", "filter"})
    assert "persistent" not in store.capabilities


def test_default_plugins_register_exactly_the_builtins() -> None:
    registry = build_registry(get_plugin_manager(load_entry_points=False))
    assert registry.names("store") == ["memory"]
    assert registry.names("embedder") == ["hash"]
    assert registry.names("searcher") == ["default"]
    entry = registry.get("store", "memory")
    assert entry.options is MemoryStoreOptions
    built = entry.build(MemoryStoreOptions())
    assert isinstance(built, MemoryStore)
    assert built.count() == 0


def test_options_reject_unknown_keys() -> None:
    with pytest.raises(ValueError, match="Extra inputs are not permitted"):
        MemoryStoreOptions.model_validate({"path": "x"})


# identity


def test_identity_is_recorded_once_and_repeating_it_is_fine(store: MemoryStore) -> None:
    assert store.get_identity() is None
    store.set_identity(identity_for(3))
    store.set_identity(identity_for(3))
    assert store.get_identity() == identity_for(3)


def test_other_model_same_dimension_is_an_identity_mismatch(store: MemoryStore) -> None:
    store.set_identity(identity_for(3))
    with pytest.raises(IdentityMismatch) as info:
        store.set_identity(identity_for(3, model="other-model"))
    assert not isinstance(info.value, DimensionMismatch)
    message = str(info.value)
    assert "test/test-model" in message
    assert "test/other-model" in message
    assert "engram rebuild" in message
    assert store.get_identity() == identity_for(3)


def test_other_dimension_is_a_dimension_mismatch(store: MemoryStore) -> None:
    store.set_identity(identity_for(3))
    with pytest.raises(DimensionMismatch, match=r"3 dims.*4 dims"):
        store.set_identity(identity_for(4))


def test_reset_forgets_chunks_documents_and_identity(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("a", "alpha", [1.0, 0.0])])
    store.put_document(Document(id="doc-a", hash="h"))
    store.reset()
    assert store.get_identity() is None
    assert store.count() == 0
    assert store.list_documents() == {}
    assert store.keyword_search("alpha", 5) == []
    store.set_identity(identity_for(5))
    assert store.get_identity() == identity_for(5)


# upsert, get, isolation


def test_get_keeps_requested_order_and_leaves_out_unknown_ids(store: MemoryStore) -> None:
    store.upsert([make_chunk(i, f"text {i}") for i in ("a", "b", "c")])
    assert [c.id for c in store.get(["c", "zzz", "a"])] == ["c", "a"]
    assert store.get([]) == []


def test_upsert_overwrites_text_vector_and_metadata(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("a", "old words", [1.0, 0.0], {"v": 1})])
    store.upsert([make_chunk("a", "new words", [0.0, 1.0], {"v": 2})])
    (chunk,) = store.get(["a"])
    assert (chunk.text, chunk.vector, chunk.metadata) == ("new words", [0.0, 1.0], {"v": 2})
    assert store.count() == 1
    assert store.keyword_search("old", 5) == []
    assert _ids(store.keyword_search("new", 5)) == ["a"]
    assert store.vector_search([0.0, 1.0], 1)[0].score == pytest.approx(1.0)


def test_upsert_without_vector_drops_the_old_vector(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("a", "text", [1.0, 0.0])])
    store.upsert([make_chunk("a", "text")])
    assert store.get(["a"])[0].vector is None
    assert store.vector_search([1.0, 0.0], 5) == []


def test_last_duplicate_in_one_batch_wins(store: MemoryStore) -> None:
    store.upsert([make_chunk("a", "first"), make_chunk("a", "second")])
    assert store.get(["a"])[0].text == "second"
    assert store.count() == 1


def test_store_and_caller_share_no_mutable_data(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    metadata: Metadata = {"tags": ["x"], "nested": {"k": 1}}
    original = make_chunk("a", "text", [1.0, 2.0], metadata)
    store.upsert([original])
    original.metadata["tags"].append("changed")  # type: ignore[union-attr]
    original.vector.append(3.0)  # type: ignore[union-attr]
    (stored,) = store.get(["a"])
    assert stored.metadata == {"tags": ["x"], "nested": {"k": 1}}
    assert stored.vector == [1.0, 2.0]
    stored.metadata["tags"].append("again")  # type: ignore[union-attr]
    hit = store.keyword_search("text", 1)[0]
    hit.chunk.metadata["nested"]["k"] = 99  # type: ignore[index,call-overload]
    assert store.get(["a"])[0].metadata == {"tags": ["x"], "nested": {"k": 1}}


def test_upsert_does_not_mutate_its_inputs(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    chunk = make_chunk("a", "text", [3.0, 4.0], {"tags": ["x"]})
    before = chunk.model_dump()
    store.upsert([chunk])
    assert chunk.model_dump() == before


def test_vectors_before_an_identity_are_refused_and_nothing_is_written(
    store: MemoryStore,
) -> None:
    batch = [make_chunk("plain", "no vector"), make_chunk("v", "with vector", [1.0, 0.0])]
    with pytest.raises(StoreError, match="set_identity"):
        store.upsert(batch)
    assert store.count() == 0
    store.upsert([make_chunk("plain", "keyword only chunks need no identity")])
    assert store.count() == 1


@pytest.mark.parametrize(
    ("vector", "error", "pattern"),
    [
        ([1.0, 2.0, 3.0], DimensionMismatch, "3 dimensions"),
        ([1.0], DimensionMismatch, "1 dimensions"),
        ([], InvalidVector, "is empty"),
        ([1.0, math.nan], InvalidVector, "position 1"),
        ([math.inf, 0.0], InvalidVector, "position 0"),
        ([0.0, -math.inf], InvalidVector, "NaN or infinite"),
    ],
)
def test_bad_vectors_are_refused_and_nothing_is_written(
    store: MemoryStore, vector: list[float], error: type[Exception], pattern: str
) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("keep", "kept", [1.0, 0.0])])
    batch = [make_chunk("keep", "overwritten?", [0.0, 1.0]), make_chunk("bad", "bad", vector)]
    with pytest.raises(error, match=pattern):
        store.upsert(batch)
    assert store.count() == 1
    assert store.get(["keep"])[0].text == "kept"
    assert store.get(["keep"])[0].vector == [1.0, 0.0]


def test_upsert_refuses_things_that_are_not_chunks(store: MemoryStore) -> None:
    with pytest.raises(StoreError, match="Chunk objects, got dict"):
        store.upsert([{"id": "a", "document_id": "d", "text": "x"}])  # type: ignore[list-item]


# delete, count, iterate, documents


def test_delete_removes_from_vector_and_keyword_results(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert(
        [make_chunk("a", "shared word", [1.0, 0.0]), make_chunk("b", "shared word", [1.0, 0.1])]
    )
    store.delete(["a", "unknown"])
    assert _ids(store.vector_search([1.0, 0.0], 5)) == ["b"]
    assert _ids(store.keyword_search("shared", 5)) == ["b"]
    assert store.get(["a"]) == []


def test_delete_documents_removes_their_chunks_and_records(store: MemoryStore) -> None:
    store.upsert(
        [
            make_chunk("a1", "alpha", document_id="A"),
            make_chunk("a2", "alpha", document_id="A"),
            make_chunk("b1", "alpha", document_id="B"),
        ]
    )
    store.put_document(Document(id="A", hash="ha"))
    store.put_document(Document(id="B", hash="hb"))
    store.delete_documents(["A", "missing"])
    assert _ids(store.keyword_search("alpha", 5)) == ["b1"]
    assert list(store.list_documents()) == ["B"]


def test_delete_where_removes_matching_chunks_only(store: MemoryStore) -> None:
    store.upsert(
        [
            make_chunk("a", "word", metadata={"type": "note"}),
            make_chunk("b", "word", metadata={"type": "fact"}),
            make_chunk("c", "word"),
        ]
    )
    store.delete_where(Eq(field="type", value="note"))
    assert sorted(_ids(store.keyword_search("word", 5))) == ["b", "c"]


def test_count_with_and_without_filter(store: MemoryStore) -> None:
    store.upsert([make_chunk(str(i), "x", metadata={"n": i}) for i in range(10)])
    assert store.count() == 10
    assert store.count(Range(field="n", gte=3, lt=7)) == 4


def test_iter_chunks_yields_every_chunk_in_batches_by_id(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk(f"c{i:02d}", "t", [float(i), 1.0]) for i in range(7)])
    batches = list(store.iter_chunks(batch_size=3))
    assert [len(b) for b in batches] == [3, 3, 1]
    flat = [c for b in batches for c in b]
    assert [c.id for c in flat] == [f"c{i:02d}" for i in range(7)]
    assert flat[5].vector == [5.0, 1.0]


def test_iter_chunks_is_a_snapshot_and_checks_batch_size(store: MemoryStore) -> None:
    store.upsert([make_chunk("a", "t")])
    iterator = store.iter_chunks()
    store.upsert([make_chunk("b", "t")])
    assert [c.id for batch in iterator for c in batch] == ["a"]
    with pytest.raises(StoreError, match="batch_size must be at least 1"):
        store.iter_chunks(batch_size=0)


def test_documents_keep_one_record_per_id(store: MemoryStore) -> None:
    store.put_document(Document(id="a", hash="1", metadata={"path": "a.md"}))
    store.put_document(Document(id="a", hash="2"))
    store.put_document(Document(id="b", hash="3"))
    docs = store.list_documents()
    assert {k: v.hash for k, v in docs.items()} == {"a": "2", "b": "3"}
    docs["b"].metadata["x"] = 1
    assert store.list_documents()["b"].metadata == {}


# vector search


def test_vector_search_scores_are_cosine_similarities(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert(
        [
            make_chunk("same", "", [2.0, 0.0]),
            make_chunk("diag", "", [1.0, 1.0]),
            make_chunk("ortho", "", [0.0, 5.0]),
            make_chunk("opposite", "", [-3.0, 0.0]),
            make_chunk("zero", "", [0.0, 0.0]),
            make_chunk("novector", "no vector here"),
        ]
    )
    hits = store.vector_search([1.0, 0.0], 10)
    assert _ids(hits) == ["same", "diag", "ortho", "zero", "opposite"]
    scores = [h.score for h in hits]
    assert scores == pytest.approx([1.0, math.sqrt(0.5), 0.0, 0.0, -1.0])
    assert hits[0].chunk.vector == [2.0, 0.0]


def test_vector_search_breaks_ties_by_chunk_id_and_honours_k(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk(name, "", [1.0, 1.0]) for name in ("d", "b", "a", "c")])
    assert _ids(store.vector_search([3.0, 3.0], 10)) == ["a", "b", "c", "d"]
    assert _ids(store.vector_search([3.0, 3.0], 2)) == ["a", "b"]
    assert store.vector_search([3.0, 3.0], 0) == []


def test_vector_search_applies_filters(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert(
        [
            make_chunk("a", "", [1.0, 0.0], {"tags": ["x"]}),
            make_chunk("b", "", [0.9, 0.1], {"tags": ["y"]}),
            make_chunk("c", "", [0.5, 0.5], {"tags": ["x", "y"]}),
        ]
    )
    assert _ids(store.vector_search([1.0, 0.0], 5, Contains(field="tags", value="y"))) == [
        "b",
        "c",
    ]
    assert store.vector_search([1.0, 0.0], 5, Eq(field="tags", value="z")) == []


def test_vector_search_checks_the_query_vector(store: MemoryStore) -> None:
    assert store.vector_search([1.0, 2.0], 3) == []
    with pytest.raises(InvalidVector):
        store.vector_search([math.nan], 3)
    store.set_identity(identity_for(2))
    with pytest.raises(DimensionMismatch, match="3 dimensions"):
        store.vector_search([1.0, 2.0, 3.0], 3)
    with pytest.raises(InvalidVector, match="NaN or infinite"):
        store.vector_search([1.0, math.inf], 3)
    with pytest.raises(StoreError, match="k must be 0 or more"):
        store.vector_search([1.0, 0.0], -1)


def test_huge_finite_vectors_do_not_overflow(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("big", "", [1e300, 1e300])])
    (hit,) = store.vector_search([1.0, 1.0], 1)
    assert hit.score == pytest.approx(1.0)


def test_zero_query_vector_scores_zero_everywhere(store: MemoryStore) -> None:
    store.set_identity(identity_for(2))
    store.upsert([make_chunk("b", "", [1.0, 0.0]), make_chunk("a", "", [0.0, -1.0])])
    hits = store.vector_search([0.0, 0.0], 5)
    assert [(h.chunk.id, h.score) for h in hits] == [("a", 0.0), ("b", 0.0)]


# keyword search


def _bm25_corpus(store: MemoryStore) -> None:
    store.upsert(
        [
            make_chunk("a", "Apple banana"),
            make_chunk("b", "apple, APPLE cherry"),
            make_chunk("c", "cherry date"),
        ]
    )


def test_keyword_scores_are_bm25_with_lucene_idf(store: MemoryStore) -> None:
    _bm25_corpus(store)
    # N = 3 chunks, 7 words in all: avgdl = 7/3; "apple" is in 2 chunks.
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    expected_a = idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * 2 / (7 / 3)))
    expected_b = idf * 2 * 2.2 / (2 + 1.2 * (0.25 + 0.75 * 3 / (7 / 3)))
    hits = store.keyword_search("apple", 10)
    assert _ids(hits) == ["b", "a"]
    assert [h.score for h in hits] == pytest.approx([expected_b, expected_a], rel=1e-12)


def test_keyword_search_is_or_and_sums_matching_words(store: MemoryStore) -> None:
    _bm25_corpus(store)
    apple = {h.chunk.id: h.score for h in store.keyword_search("apple", 10)}
    date = {h.chunk.id: h.score for h in store.keyword_search("date", 10)}
    both = {h.chunk.id: h.score for h in store.keyword_search("date? APPLE!", 10)}
    assert set(both) == {"a", "b", "c"}
    assert both["c"] == pytest.approx(date["c"])
    assert both["b"] == pytest.approx(apple["b"])
    repeated = {h.chunk.id: h.score for h in store.keyword_search("apple apple", 10)}
    assert repeated == apple


def test_keyword_search_without_words_or_matches_returns_nothing(store: MemoryStore) -> None:
    _bm25_corpus(store)
    assert store.keyword_search("", 5) == []
    assert store.keyword_search("?! -- ...", 5) == []
    assert store.keyword_search("zebra", 5) == []
    assert store.keyword_search("apple", 0) == []
    with pytest.raises(StoreError, match="k must be 0 or more"):
        store.keyword_search("apple", -2)


def test_keyword_query_text_is_data_not_syntax(store: MemoryStore) -> None:
    _bm25_corpus(store)
    hits = store.keyword_search('apple" OR "x\' NEAR(banana) *', 10)
    assert _ids(hits)[:2] == ["a", "b"]
    assert all(h.score > 0 for h in hits)


def test_keyword_search_handles_unicode_words_and_cjk(store: MemoryStore) -> None:
    store.upsert(
        [
            make_chunk("fr", "Le café est très bon"),
            make_chunk("jp", "東京タワーに行きました"),
            make_chunk("zh", "我喜欢北京"),
        ]
    )
    assert _ids(store.keyword_search("CAFÉ", 5)) == ["fr"]
    # CJK is matched per character: both 東 and 京 make 東京 outrank 北京, which shares 京.
    assert _ids(store.keyword_search("東京", 5)) == ["jp", "zh"]
    assert _ids(store.keyword_search("北京", 5)) == ["zh", "jp"]
    assert _ids(store.keyword_search("喜欢", 5)) == ["zh"]


def test_filters_remove_keyword_hits_without_changing_scores(store: MemoryStore) -> None:
    store.upsert(
        [
            make_chunk("a", "red apple", metadata={"kind": "fruit"}),
            make_chunk("b", "red car", metadata={"kind": "thing"}),
            make_chunk("c", "red red red", metadata={"kind": "fruit"}),
        ]
    )
    everything = {h.chunk.id: h.score for h in store.keyword_search("red", 10)}
    fruit = store.keyword_search("red", 10, Eq(field="kind", value="fruit"))
    assert _ids(fruit) == ["c", "a"]
    assert [h.score for h in fruit] == [everything["c"], everything["a"]]


def test_keyword_ties_are_broken_by_chunk_id(store: MemoryStore) -> None:
    store.upsert([make_chunk(name, "same words here") for name in ("z", "m", "a")])
    hits = store.keyword_search("words", 2)
    assert _ids(hits) == ["a", "m"]
    assert hits[0].score == hits[1].score > 0


# properties

_component = st.integers(min_value=-4, max_value=4).map(float)
_vector3 = st.lists(_component, min_size=3, max_size=3)
_chunk_id = st.sampled_from([f"c{i}" for i in range(12)])
_words = st.lists(st.sampled_from(["alpha", "beta", "gamma", "delta", "Beta", "ALPHA"]), max_size=6)


def _naive_cosine(a: list[float], b: list[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    if na == 0 or nb == 0:
        return 0.0
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.dictionaries(_chunk_id, _vector3, max_size=12),
    query=_vector3,
    k=st.integers(min_value=0, max_value=15),
)
def test_vector_search_equals_a_naive_top_k(
    rows: dict[str, list[float]], query: list[float], k: int
) -> None:
    store = MemoryStore()
    store.set_identity(identity_for(3))
    store.upsert([make_chunk(cid, "", vec) for cid, vec in rows.items()])
    hits = store.vector_search(query, k)
    naive = sorted(
        ((_naive_cosine(vec, query), cid) for cid, vec in rows.items()),
        key=lambda pair: (-pair[0], pair[1]),
    )[:k]
    assert len(hits) == len(naive)
    assert [h.score for h in hits] == pytest.approx([s for s, _ in naive], abs=1e-9)
    for hit in hits:
        assert hit.score == pytest.approx(_naive_cosine(rows[hit.chunk.id], query), abs=1e-9)
    keys = [(-h.score, h.chunk.id) for h in hits]
    assert keys == sorted(keys)


@st.composite
def _chunk_batches(draw: st.DrawFn) -> list[Chunk]:
    count = draw(st.integers(min_value=0, max_value=10))
    return [
        make_chunk(
            draw(_chunk_id),
            " ".join(draw(_words)),
            draw(st.one_of(st.none(), _vector3)),
            {"n": draw(st.integers(0, 3))},
        )
        for _ in range(count)
    ]


def _state(store: MemoryStore) -> tuple[object, ...]:
    chunks = [c.model_dump() for batch in store.iter_chunks() for c in batch]
    keyword = [(h.chunk.id, h.score) for h in store.keyword_search("alpha beta", 20)]
    vector = [(h.chunk.id, h.score) for h in store.vector_search([1.0, 2.0, 3.0], 20)]
    return store.count(), store.count(Eq(field="n", value=1)), chunks, keyword, vector


@settings(max_examples=60, deadline=None)
@given(first=_chunk_batches(), second=_chunk_batches())
def test_upsert_is_idempotent(first: list[Chunk], second: list[Chunk]) -> None:
    once = MemoryStore()
    once.set_identity(identity_for(3))
    once.upsert(first)
    once.upsert(second)
    twice = MemoryStore()
    twice.set_identity(identity_for(3))
    twice.upsert(first)
    twice.upsert(second)
    twice.upsert(second)
    assert _state(once) == _state(twice)
    # Overwriting everything with the same chunks again changes nothing either.
    twice.upsert(first)
    twice.upsert(second)
    assert _state(once) == _state(twice)


@settings(max_examples=60, deadline=None)
@given(batch=_chunk_batches(), n=st.integers(0, 3), query=_words)
def test_filtered_keyword_search_is_the_unfiltered_ranking_restricted(
    batch: list[Chunk], n: int, query: list[str]
) -> None:
    store = MemoryStore()
    store.set_identity(identity_for(3))
    store.upsert(batch)
    text = " ".join(query)
    everything = store.keyword_search(text, 100)
    kept = [(h.chunk.id, h.score) for h in everything if h.chunk.metadata["n"] == n]
    filtered = store.keyword_search(text, 100, Eq(field="n", value=n))
    assert [(h.chunk.id, h.score) for h in filtered] == kept
    assert all(h.score > 0 for h in everything)
