"""Search through the store's candidates (chunks built for the returned hits only) gives what the
plain hit lists give: the same ids, in the same order, with the same scores, in every mode and
fusion, with and without a filter, and while the side file lags behind SQLite."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, Literal

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import (
    CandidateSearch,
    Chunk,
    Eq,
    Filter,
    Hit,
    IndexIdentity,
    InputType,
    SearchConfig,
    Searcher,
    SearchMode,
    StoreCapability,
    StoreError,
)
from engram.testing.host import build_registry, get_plugin_manager, weighted
from engram_sqlite import SQLiteStore

DIM = 16
IDENTITY = IndexIdentity(embedder="table", model="t16", dimension=DIM, chunker="c")
MakeStore = Callable[..., SQLiteStore]
WORDS = [
    "river",
    "stone",
    "maple",
    "cloud",
    "ember",
    "quartz",
    "lantern",
    "meadow",
    "harbor",
    "violet",
]


class HitsOnly:
    """The same SQLite store seen through the plain Store methods only (no candidates; its
    keyword ceiling, which fusion asks either way), so the searcher takes core's path over hit
    lists, which builds every candidate's chunk."""

    capabilities: ClassVar[frozenset[StoreCapability]] = SQLiteStore.capabilities

    def __init__(self, store: SQLiteStore) -> None:
        self._store = store

    def get_identity(self) -> IndexIdentity | None:
        return self._store.get_identity()

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        return self._store.vector_search(vector, k, filter)

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        return self._store.keyword_search(query, k, filter)

    def keyword_ceiling(self, query: str) -> float | None:
        """Not a candidate method: a store's ceiling serves fusion on either path."""
        return self._store.keyword_ceiling(query)


class TableEmbedder:
    """Query vectors from a fixed table (the queries below), like the bench's fixed embedder."""

    name = "table"
    model = "t16"
    dimension = DIM

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        return [self.table[t] for t in texts]


def fill(store: SQLiteStore, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(n, DIM)).tolist()
    chunks = []
    for i in range(n):
        text = " ".join(rng.choice(WORDS, size=int(rng.integers(3, 9))).tolist())
        vector = None if i % 17 == 0 else vectors[i]  # some chunks are keyword-only
        chunks.append(
            Chunk(
                id=f"c{i:04d}",
                document_id=f"d{i % 13}",
                text=text,
                vector=vector,
                metadata={"half": i % 2},
            )
        )
    store.upsert(chunks)


@pytest.mark.parametrize("fusion", ["weighted", "rrf"])
@pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
@pytest.mark.parametrize("flt", [None, Eq(field="half", value=1)], ids=["all", "filtered"])
def test_candidates_rank_exactly_as_the_hit_lists(
    make_store: MakeStore, fusion: Literal["weighted", "rrf"], mode: SearchMode, flt: Filter | None
) -> None:
    store = make_store()
    assert isinstance(store, CandidateSearch) and isinstance(store, SQLiteStore)
    store.set_identity(IDENTITY)
    fill(store, 600, seed=1)
    store.upsert([Chunk(id="c0003", document_id="d", text="maple ember", vector=[1.0] * DIM)])
    store.delete(["c0005"])  # changes after the last write: the file and SQLite both hold them
    rng = np.random.default_rng(2)
    queries = [" ".join(rng.choice(WORDS, size=2).tolist()) + f" q{i}" for i in range(12)]
    embedder = TableEmbedder({q: rng.normal(size=DIM).tolist() for q in queries})
    searchers = build_registry(get_plugin_manager()).get("searcher", "default")
    searcher: Searcher = searchers.build(SearchConfig(min_score=0.0, limit=10, fusion=fusion))
    for query in queries:
        got = searcher.search(query, store, embedder, mode=mode, filter=flt).hits
        want = searcher.search(query, HitsOnly(store), embedder, mode=mode, filter=flt).hits  # type: ignore[arg-type]
        assert got, query
        assert [h.chunk.id for h in got] == [h.chunk.id for h in want], query
        for a, b in zip(got, want, strict=True):
            assert abs(a.score - b.score) <= 1e-6
            for x, y in ((a.vector_score, b.vector_score), (a.keyword_score, b.keyword_score)):
                assert (x is None) == (y is None) and abs((x or 0.0) - (y or 0.0)) <= 1e-6
            assert (a.chunk.text, a.chunk.metadata) == (b.chunk.text, b.chunk.metadata)
            assert a.chunk.vector is None  # built without decoding the vector


def test_side_file_follows_the_writer_not_the_reader(make_store: MakeStore, db_path: Path) -> None:
    """Each committed write is appended to the side file; a reader's search finds it current."""
    side = db_path.with_name(db_path.name + "-vectors")
    store = make_store()
    store.set_identity(IDENTITY)
    fill(store, 300, seed=3)
    size = side.stat().st_size
    fill(store, 300, seed=4)  # the same ids again: 300 replaced vectors, appended
    assert side.stat().st_size > size
    reader = make_store()
    before = side.stat().st_mtime_ns
    reader.vector_search([1.0] * DIM, 5)
    assert side.stat().st_mtime_ns == before  # the search wrote nothing


@pytest.mark.parametrize("in_memory", [False, True], ids=["file", "memory"])
def test_both_halves_at_once_equal_the_halves_one_after_the_other(
    make_store: MakeStore, in_memory: bool
) -> None:
    """``candidate_pair`` (keyword half on the second connection's thread, or one after the other
    for an in-memory index) answers exactly what the two calls answer, for any words, k and
    filter, while writes land in between."""
    path = Path(":memory:") if in_memory else None
    store = make_store(parallel_hybrid_from=0, **({} if path is None else {"path": path}))
    store.set_identity(IDENTITY)
    fill(store, 400, seed=5)
    vectors = np.random.default_rng(6).normal(size=(8, DIM)).tolist()

    @settings(max_examples=40, deadline=None)
    @given(
        st.lists(st.sampled_from([*WORDS, "absent", "!!"]), min_size=1, max_size=4),
        st.integers(0, 30),
        st.sampled_from([None, Eq(field="half", value=0)]),
        st.integers(0, 7),
    )
    def same(words: list[str], k: int, flt: Filter | None, which: int) -> None:
        query, vector = " ".join(words), vectors[which]
        vector_side, keyword_side = store.candidate_pair(vector, query, k, flt)
        for got, want in (
            (vector_side, store.vector_candidates(vector, k, flt)),
            (keyword_side, store.keyword_candidates(query, k, flt)),
        ):
            assert got.ids == want.ids
            assert np.array_equal(got.scores, want.scores)
            assert np.array_equal(got.keys, want.keys)
        if which == 0:  # a write between searches: the second connection sees it at once
            store.upsert([Chunk(id=f"new{k}", document_id="d", text=query, vector=vector)])

    same()


def test_the_keyword_half_has_its_own_thread_and_connection_until_close(
    make_store: MakeStore,
) -> None:
    """The second connection lives on one named thread, opened on first use by an index of
    ``parallel_hybrid_from`` vectors or more; closing the store closes it and ends the thread,
    and a closed store refuses to search."""

    def readers() -> list[threading.Thread]:
        return [t for t in threading.enumerate() if t.name.startswith("engram-sqlite-read")]

    before = len(readers())
    small = make_store(parallel_hybrid_from=51)
    small.set_identity(IDENTITY)
    fill(small, 50, seed=7)
    small.candidate_pair([1.0] * DIM, "river stone", 5)
    assert len(readers()) == before  # under the threshold: one after the other, no thread
    store = make_store(parallel_hybrid_from=40)  # 47 of the 50 chunks have vectors
    store.candidate_pair([1.0] * DIM, "river stone", 5)  # the first search learns the size
    store.candidate_pair([1.0] * DIM, "river stone", 5)
    assert len(readers()) == before + 1
    store.close()
    assert len(readers()) == before
    with pytest.raises(StoreError, match="closed"):
        store.candidate_pair([1.0] * DIM, "river stone", 5)


@pytest.mark.parametrize("together", [False, True], ids=["one-read", "two-threads"])
def test_the_pair_names_rows_by_key_and_brings_the_keyword_cosines(
    make_store: MakeStore, together: bool
) -> None:
    """Both halves come as rowids with ids read only when asked; the keyword candidates'
    cosines are what ``key_scores`` gives; a chunk deleted between ranking and building is
    left out of the hits, and the rest keep their places."""
    store = make_store(parallel_hybrid_from=0 if together else 10**9)
    store.set_identity(IDENTITY)
    fill(store, 300, seed=5)
    vector = np.random.default_rng(6).normal(size=DIM).tolist()
    vector_side, keyword_side = store.candidate_pair(vector, "maple ember river", 40)
    assert len(vector_side) == 40 and len(keyword_side) == 40
    assert keyword_side.cosines is not None
    np.testing.assert_allclose(
        keyword_side.cosines, store.key_scores(keyword_side.keys, vector), atol=1e-6
    )
    alone = store.vector_candidates(vector, 40)
    assert vector_side.keys.tolist() == alone.keys.tolist()
    assert vector_side.ids == alone.ids == [c.id for c in store.chunks_for(alone.keys)]
    head = weighted(vector_side, keyword_side, standout_floor=0.35).head(10)
    ranked = [c.id for c in store.chunks_for(head.keys)]
    store.delete([ranked[2]])
    hits = head.hits(store.chunks_for(head.keys))
    assert [h.chunk.id for h in hits] == ranked[:2] + ranked[3:]


@pytest.mark.parametrize("changed", [0, 5])
def test_keyword_cosines_are_read_from_the_scan_when_it_covers_them(
    make_store: MakeStore, changed: int
) -> None:
    """The vector half's scan already scored every row: the keyword candidates' cosines are
    taken from it (equal to a fresh gather and product); with rows changed since the side
    file, they are computed, and still the same."""
    from engram_sqlite.ranking import vector_top
    from engram_sqlite.vectors import unit_query

    store = make_store()
    store.set_identity(IDENTITY)
    fill(store, 300, seed=7)
    rng = np.random.default_rng(8)
    if changed:  # fewer than the side file's append threshold: searched from SQLite's rows
        moved = [
            c.model_copy(update={"vector": rng.normal(size=DIM).tolist()})
            for c in store.get([f"c{i:04d}" for i in range(1, changed + 1)])
        ]
        store.upsert(moved)
    vector = rng.normal(size=DIM)
    keys = np.arange(1, 301, 7, dtype=np.int64)
    with store._db.read() as conn:
        top = vector_top(conn, store._meta, store._matrix, vector, 10, "1", [])
    assert top.view is not None and top.query is not None
    assert top.scanned is not None  # no filter: the scan scored every snapshot record
    assert len(top.view.delta_rowids) == changed
    from_scan = top.cosines(keys)
    fresh = top.view.scores_for(keys, unit_query(vector, IDENTITY))
    assert from_scan is not None
    np.testing.assert_allclose(from_scan, fresh, atol=1e-6)
    np.testing.assert_allclose(from_scan, store.key_scores(keys, vector.tolist()), atol=1e-6)
