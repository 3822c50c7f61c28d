"""``StoreSuite``: the behaviour every Store must show. Subclass it and provide ``store``.

Each test's docstring says what a failure usually means and how to fix it. Tests gate on the
store's declared ``capabilities``: an undeclared capability must raise ``CapabilityError``.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Iterator
from contextlib import AbstractContextManager
from typing import Any

import pytest

from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.errors import (
    CapabilityError,
    DimensionMismatch,
    FilterError,
    IdentityMismatch,
    InvalidVector,
    StoreError,
)
from engram.filters import And, Contains, Eq, Filter, In, Ne, Not, Or, Range, matches, parse_filter
from engram.ingest.records import Records
from engram.models import Chunk, Document, Hit
from engram.protocols import HasOptions, KeywordCeiling, ReplacesDocuments, Store
from engram.search.candidates import candidate_search
from engram.stamps import bulk_stamp, selected
from engram.testing.data import (
    DIMENSION,
    IDENTITY,
    OTHER_IDENTITY,
    WORDS,
    chunk,
    cosine,
    unit_vector,
)
from engram.testing.integrity import SuiteIntegrity
from engram.testing.state_machine import run_store_state_machine

SUITE_FILTERS: list[Filter] = [
    Eq(field="group", value="a"),
    Ne(field="group", value="a"),
    In(field="group", values=["b", "c"]),
    In(field="group", values=[]),
    Contains(field="tags", value="even"),
    Range(field="n", gte=3, lt=11),
    Range(field="n", gt=2.5),
    Range(field="day", gte="2026-03-05", lte="2026-03-12T00:00:00"),
    And(filters=[Eq(field="group", value="b"), Range(field="n", lt=20)]),
    Or(filters=[Eq(field="group", value="c"), Contains(field="tags", value="t1")]),
    Not(filter=Eq(field="group", value="a")),
    Not(filter=Or(filters=[Range(field="n", lt=5), Eq(field="group", value="b")])),
    Eq(field="missing", value=None),
    Ne(field="missing", value="x"),
    Eq(field="n", value=4.0),
    Eq(field="flag", value=True),
    Eq(field="flag", value=1),
]


def ids(hits: list[Hit] | list[Chunk]) -> list[str]:
    return [h.chunk.id if isinstance(h, Hit) else h.id for h in hits]


def assert_same_ranking(got: list[Hit], expected: list[Hit], *, tol: float = 1e-4) -> None:
    """Same scores in the same order; ids equal up to groups of tied scores (the cut-off of a
    tie group may keep any of its members)."""
    assert len(got) == len(expected), f"expected {len(expected)} hits, got {len(got)}"
    for g, e in zip(got, expected, strict=True):
        assert math.isclose(g.score, e.score, abs_tol=tol), (
            f"score {g.score} for {g.chunk.id} where the exact reference has "
            f"{e.score} for {e.chunk.id}"
        )
    ref_scores = [e.score for e in expected]
    for g in got:
        tied = {e.chunk.id for e in expected if math.isclose(e.score, g.score, abs_tol=tol)}
        last_group = math.isclose(g.score, ref_scores[-1], abs_tol=tol)
        assert g.chunk.id in tied or last_group, f"{g.chunk.id} is not among the exact top hits"


class StoreSuite(SuiteIntegrity):
    """Conformance tests for a Store. Provide a ``store`` fixture yielding a fresh, empty store.

    Override ``reopen`` if your store cannot be reopened as ``type(store)(store.options)``.
    """

    _conformance_suite = True

    @pytest.fixture
    def store(self) -> Store | Iterator[Store]:
        raise pytest.UsageError(
            "StoreSuite needs a `store` fixture that yields a fresh, empty store; define it in "
            "your subclass (see docs/plugins/testing.md)"
        )

    def reopen(self, store: Store) -> Store:
        """Close ``store`` and open the same data again (for persistence tests)."""
        if not isinstance(store, HasOptions):
            raise pytest.UsageError(
                f"{type(store).__name__} has no `options` attribute; override StoreSuite.reopen"
            )
        options = store.options
        store.close()
        return type(store)(options)  # type: ignore[call-arg]

    @pytest.fixture
    def ready(self, store: Store) -> Store:
        store.set_identity(IDENTITY)
        return store

    @pytest.fixture
    def filled(self, ready: Store) -> Store:
        ready.upsert([chunk(i, flag=(i % 2 == 0) if i % 3 else 1) for i in range(30)])
        return ready

    def _has(self, store: Store, capability: str) -> bool:
        return capability in store.capabilities

    # -- upsert and get ------------------------------------------------------------------------
    def test_upsert_then_get_returns_what_was_written(self, ready: Store) -> None:
        """A chunk read back must equal the chunk written: text, vector, metadata, document.
        Failure: a field is dropped or re-typed on the way in or out (JSON metadata
        round-trip, float32 vectors compared exactly — vectors are compared with tolerance)."""
        written = [chunk(i) for i in range(5)]
        ready.upsert(written)
        got = ready.get([c.id for c in written])
        assert ids(got) == [c.id for c in written]
        for g, w in zip(got, written, strict=True):
            assert g.text == w.text
            assert g.document_id == w.document_id
            assert g.document_hash == w.document_hash
            assert g.metadata == w.metadata, "metadata must round-trip exactly (types included)"
            assert g.vector is not None and w.vector is not None
            assert len(g.vector) == DIMENSION
            assert all(
                math.isclose(a, b, abs_tol=1e-6) for a, b in zip(g.vector, w.vector, strict=True)
            )

    def test_upsert_is_idempotent(self, ready: Store) -> None:
        """Upserting the same chunks twice leaves one copy of each.
        Failure: upsert appends instead of replacing by id (check the unique key on id)."""
        batch = [chunk(i) for i in range(6)]
        ready.upsert(batch)
        ready.upsert(batch)
        assert ready.count() == 6
        assert len(ready.vector_search(unit_vector(0), 50)) == 6

    def test_upsert_overwrites_text_vector_and_metadata(self, ready: Store) -> None:
        """Re-upserting an id replaces everything about it, in vector AND keyword indexes.
        Failure: the keyword index still holds the old text, or the vector index the old vector."""
        ready.upsert([chunk(1, text="original zebra words")])
        ready.upsert(
            [
                chunk(1, text="replacement walrus words").model_copy(
                    update={"vector": unit_vector(99), "metadata": {"new": True}}
                )
            ]
        )
        (got,) = ready.get(["chunk-1"])
        assert got.text == "replacement walrus words" and got.metadata == {"new": True}
        top = ready.vector_search(unit_vector(99), 1)
        assert ids(top) == ["chunk-1"] and math.isclose(top[0].score, 1.0, abs_tol=1e-4)
        if self._has(ready, "keyword"):
            assert ready.keyword_search("zebra", 5) == [], "old text still in the keyword index"
            assert ids(ready.keyword_search("walrus", 5)) == ["chunk-1"]

    def test_upsert_does_not_mutate_inputs(self, ready: Store) -> None:
        """The store must copy what it keeps. Failure: metadata dicts or vectors handed in were
        changed (e.g. normalised in place, keys added)."""
        batch = [chunk(i, extra={"nested": [1, 2]}) for i in range(4)]
        before = copy.deepcopy([c.model_dump() for c in batch])
        ready.upsert(batch)
        ready.vector_search(unit_vector(1), 3)
        assert [c.model_dump() for c in batch] == before

    def test_get_keeps_order_and_leaves_out_unknown_ids(self, ready: Store) -> None:
        """``get`` returns chunks in the order asked, without unknown ids.
        Failure: results come back in storage order (sort them by the requested order)."""
        ready.upsert([chunk(i) for i in range(5)])
        assert ids(ready.get(["chunk-3", "nope", "chunk-0", "chunk-4"])) == [
            "chunk-3",
            "chunk-0",
            "chunk-4",
        ]
        assert ready.get([]) == []
        assert ready.get(["nope"]) == []

    def test_chunks_without_vectors_are_kept_but_not_in_vector_results(self, ready: Store) -> None:
        """A chunk may be stored without a vector (embedder down): it is readable and keyword
        searchable, never a vector hit. Failure: a NULL vector crashed or matched."""
        ready.upsert([Chunk(id="novec", document_id="d", text="lonely keyword")])
        assert ids(ready.get(["novec"])) == ["novec"]
        assert ready.vector_search(unit_vector(1), 10) == []
        if self._has(ready, "keyword"):
            assert ids(ready.keyword_search("lonely", 5)) == ["novec"]

    # -- delete --------------------------------------------------------------------------------
    def test_delete_removes_from_vector_and_keyword_results(self, ready: Store) -> None:
        """Deleted chunks vanish everywhere. Failure: the vector or FTS table keeps rows of a
        deleted chunk (delete from every index in one transaction)."""
        ready.upsert([chunk(i, text=f"shared word{i}") for i in range(6)])
        ready.delete(["chunk-2", "chunk-4"])
        assert "chunk-2" not in ids(ready.vector_search(unit_vector(2), 10))
        assert ready.get(["chunk-2", "chunk-4"]) == []
        assert ready.count() == 4
        if self._has(ready, "keyword"):
            found = ids(ready.keyword_search("shared", 10))
            assert sorted(found) == ["chunk-0", "chunk-1", "chunk-3", "chunk-5"]

    def test_delete_unknown_ids_is_not_an_error(self, ready: Store) -> None:
        """Deleting what is not there is a no-op. Failure: the store raised on a missing id."""
        ready.upsert([chunk(1)])
        ready.delete(["nope", "chunk-1", "chunk-1"])
        ready.delete([])
        assert ready.count() == 0

    def test_delete_documents_removes_their_chunks_and_records(self, ready: Store) -> None:
        """``delete_documents`` removes every chunk of those documents and their records.
        Failure: chunks are matched by id prefix instead of document_id, or records stay."""
        ready.upsert([chunk(i) for i in range(10)])
        ready.put_document(Document(id="doc-1", hash="h1"))
        ready.put_document(Document(id="doc-2", hash="h2"))
        ready.delete_documents(["doc-1", "unknown-doc"])
        remaining = [c for b in ready.iter_chunks() for c in b]
        assert all(c.document_id != "doc-1" for c in remaining)
        assert len(remaining) == 8
        assert set(ready.list_documents()) == {"doc-2"}
        assert all(h.chunk.document_id != "doc-1" for h in ready.vector_search(unit_vector(1), 20))

    def test_delete_where_removes_exactly_the_matching_chunks(self, filled: Store) -> None:
        """``delete_where(filter)`` deletes what the filter matches and nothing else.
        Failure: the filter translation differs between search and delete paths."""
        if not self._has(filled, "filter"):
            with pytest.raises(CapabilityError):
                filled.delete_where(Eq(field="group", value="a"))
            return
        everything = [c for b in filled.iter_chunks() for c in b]
        flt = Or(filters=[Eq(field="group", value="a"), Range(field="n", gte=25)])
        filled.delete_where(flt)
        kept = sorted(c.id for b in filled.iter_chunks() for c in b)
        assert kept == sorted(c.id for c in everything if not matches(flt, c.metadata))

    # -- counting, listing, documents ----------------------------------------------------------
    def test_count_and_iter_agree_with_what_was_written(self, filled: Store) -> None:
        """``count()``, ``count(filter)`` and ``iter_chunks`` describe the same contents.
        Failure: count reads a stale index, or iteration skips the last partial batch."""
        every = [c for b in filled.iter_chunks(batch_size=7) for c in b]
        assert len(every) == filled.count() == 30
        assert len({c.id for c in every}) == 30
        if self._has(filled, "filter"):
            flt = Eq(field="group", value="b")
            assert filled.count(flt) == sum(matches(flt, c.metadata) for c in every)

    def test_documents_are_recorded_replaced_and_listed(self, ready: Store) -> None:
        """Document records: one per id, last write wins, metadata round-trips.
        Failure: put_document inserts duplicates instead of replacing."""
        ready.put_document(
            Document(id="a.md", hash="1", metadata={"source": "memory", "k": [1, "x"]})
        )
        ready.put_document(Document(id="a.md", hash="2", metadata={"source": "memory"}))
        ready.put_document(Document(id="b.md", hash="3"))
        docs = ready.list_documents()
        assert set(docs) == {"a.md", "b.md"}
        assert docs["a.md"].hash == "2" and docs["a.md"].metadata == {"source": "memory"}

    def test_document_stamps_agree_with_the_records(self, ready: Store) -> None:
        """A re-index's bulk read (``ReadsStamps``, or core's fallback over ``list_documents``)
        gives each record of the sources under the roots the stamp ``bulk_stamp`` gives it, and
        ``documents(ids)`` the records themselves. Failure: the store's stamp columns are not
        rewritten with the record, a malformed stat or time is trusted, a source is left out
        or mixed up, or the path test takes "/v2/x.md" for a file under "/v"."""
        mtime = 1_700_000_000_000_000_000
        good = {"source": "memory", "stat": [10, mtime, 7, mtime], "indexed_at": mtime / 1e9 + 5}
        records = {
            "a": ("h", {**good, "path": "/v/a.md"}),
            "deep": ("h", {**good, "path": "/v/sub/deep.md"}),
            "root-file": ("h", {**good, "path": "/v"}),
            "racy": ("h", {**good, "path": "/v/r.md", "indexed_at": mtime / 1e9 + 1}),
            "unhashed": ("", {**good, "path": "/v/u.md"}),
            "bad-stat": ("h", {**good, "path": "/v/b.md", "stat": ["10", mtime, 7, mtime]}),
            "short-stat": ("h", {**good, "path": "/v/s.md", "stat": [10, mtime]}),
            # written before the ctime was kept: hashed once, never trusted
            "no-ctime": ("h", {**good, "path": "/v/c.md", "stat": [10, mtime, 7]}),
            "bool-time": ("h", {**good, "path": "/v/t.md", "indexed_at": True}),
            "no-meta": ("h", {}),
            "session": ("h", {**good, "source": "sessions", "path": "/v/x.md"}),
            "note": ("h", {**good, "source": "vault", "path": "/v/n.md"}),
            "old-note": ("h", {**good, "source": "vault", "path": "/v/o.md", "indexed_at": 1.0}),
            "sibling": ("h", {**good, "path": "/v2/x.md"}),
            "elsewhere": ("h", {**good, "path": "/w/x.md"}),
        }
        for doc_id, (digest, meta) in records.items():
            ready.put_document(Document(id=doc_id, hash="stale", metadata={"source": "memory"}))
            ready.put_document(Document(id=doc_id, hash=digest, metadata=meta))
        docs = ready.list_documents()
        labels, roots = ["memory", "vault"], ["/v", "/w"]
        expected = {i: bulk_stamp(d, 2.0) for i, d in docs.items() if selected(d, labels, roots)}
        assert set(expected) == {
            "a", "deep", "root-file", "racy", "unhashed", "bad-stat", "short-stat",
            "no-ctime", "bool-time", "elsewhere", "note", "old-note",
        }  # fmt: skip
        assert expected["a"] == (10, mtime, 7, mtime, "memory", "a")
        assert expected["note"] == (10, mtime, 7, mtime, "vault", "note")
        assert expected["racy"][:4] == expected["old-note"][:4] == (None, mtime, 7, mtime)
        nothing = (None, None, None, None)
        assert expected["bad-stat"][:4] == expected["short-stat"][:4] == nothing
        assert expected["no-ctime"][:4] == nothing
        assert Records(ready).stamps(labels, roots, 2.0) == expected
        assert Records(ready).stamps(["vault"], roots, 2.0) == {
            i: expected[i] for i in ("note", "old-note")
        }
        assert Records(ready).stamps(labels, [], 2.0) == {}
        assert Records(ready).stamps([], roots, 2.0) == {}
        wanted = ["a", "racy", "unknown"]
        assert Records(ready).documents(wanted) == {i: docs[i] for i in ("a", "racy")}

    def test_replace_document_is_upsert_prune_and_record_at_once(self, ready: Store) -> None:
        """``replace_document`` (``ReplacesDocuments``, when offered) leaves a document's chunks
        exactly the given ones (others of that document gone, other documents untouched) and
        its record written, searchable at once. Failure: a stale chunk of the document
        survives, another document's chunk is pruned, or the record is not the one given."""
        if not isinstance(ready, ReplacesDocuments):
            return  # the engine writes upsert, prune, record instead (covered above)
        old = [chunk(i, document_id="doc") for i in range(3)]
        other = chunk(9, document_id="other")
        ready.upsert([*old, other])
        new = [old[1].model_copy(update={"text": "replaced words"}), chunk(4, document_id="doc")]
        record = Document(id="doc", hash="h2", metadata={"source": "memory", "chunk_ids": ["x"]})
        ready.replace_document(record, new)
        kept = {c.id: c.text for batch in ready.iter_chunks() for c in batch}
        assert kept == {**{c.id: c.text for c in new}, other.id: other.text}
        assert ready.list_documents()["doc"] == record
        assert new[1].vector is not None
        assert ids(ready.vector_search(new[1].vector, 1)) == [new[1].id]
        ready.replace_document(Document(id="doc", hash="h3"), [])
        assert {c.id for batch in ready.iter_chunks() for c in batch} == {other.id}
        assert ready.list_documents()["doc"].hash == "h3"

    def test_reset_empties_everything_including_identity(self, filled: Store) -> None:
        """``reset`` leaves the store as new (rebuild depends on it).
        Failure: a vector index, a keyword index, a document table or the identity survived."""
        filled.put_document(Document(id="x", hash="y"))
        filled.reset()
        assert filled.count() == 0 and filled.list_documents() == {}
        assert filled.get_identity() is None
        filled.set_identity(OTHER_IDENTITY)
        filled.upsert([chunk(1)])
        assert filled.count() == 1

    # -- vector search -------------------------------------------------------------------------
    def test_vector_search_matches_the_exact_reference(self, filled: Store) -> None:
        """Top-k equals exact brute-force cosine search, sorted best first, at most k hits.
        Failure: an ANN index with poor recall, a distance returned instead of a similarity,
        or L2 distance used where cosine was asked."""
        reference = _reference_with([c for b in filled.iter_chunks() for c in b])
        for seed in range(5):
            query = unit_vector(1000 + seed)
            for k in (1, 5, 30, 100):
                got = filled.vector_search(query, k)
                assert len(got) <= k
                assert [h.score for h in got] == sorted((h.score for h in got), reverse=True), (
                    "hits unsorted"
                )
                assert all(-1.0001 <= h.score <= 1.0001 for h in got), "score outside cosine range"
                assert_same_ranking(got, reference.vector_search(query, k))

    def test_vector_search_scores_are_cosine_similarity(self, ready: Store) -> None:
        """The score of a hit is the cosine similarity of query and vector (1 = same direction).
        Failure: the store returns a distance, or does not normalise unnormalised vectors."""
        a = [3.0, 4.0] + [0.0] * (DIMENSION - 2)
        ready.upsert([Chunk(id="a", document_id="d", text="t", vector=a)])
        (hit,) = ready.vector_search([6.0, 8.0] + [0.0] * (DIMENSION - 2), 1)
        assert math.isclose(hit.score, 1.0, abs_tol=1e-5)
        (hit,) = ready.vector_search([-4.0, 3.0] + [0.0] * (DIMENSION - 2), 1)
        assert math.isclose(
            hit.score, cosine(a, [-4.0, 3.0] + [0.0] * (DIMENSION - 2)), abs_tol=1e-5
        )

    def test_vector_search_ties_are_all_reported(self, ready: Store) -> None:
        """Chunks with identical vectors tie; a tie is resolved by returning them all with equal
        scores (in any order). Failure: duplicates collapsed, or one of a tie dropped."""
        same = unit_vector(5)
        ready.upsert(
            [Chunk(id=f"t{i}", document_id="d", text="tie", vector=same) for i in range(3)]
        )
        ready.upsert([chunk(50)])
        got = ready.vector_search(same, 3)
        assert sorted(ids(got)) == ["t0", "t1", "t2"]
        assert len({round(h.score, 5) for h in got}) == 1

    def test_search_hits_carry_the_stored_chunk(self, filled: Store) -> None:
        """A hit's chunk is the stored chunk: text, document and metadata, not just an id.
        Failure: search returns ids and scores only, or rebuilds chunks from a partial row."""
        stored = {c.id: c for b in filled.iter_chunks() for c in b}
        hits = filled.vector_search(unit_vector(7), 30)
        if self._has(filled, "keyword"):
            hits += filled.keyword_search(" ".join(WORDS), 30)
        assert hits
        for h in hits:
            s = stored[h.chunk.id]
            assert (h.chunk.text, h.chunk.document_id, h.chunk.metadata) == (
                s.text,
                s.document_id,
                s.metadata,
            ), f"hit {h.chunk.id} differs from the stored chunk"

    def test_candidates_agree_with_the_hit_lists(self, filled: Store) -> None:
        """Candidates (the store's own ``CandidateSearch``, or core's adapter over its hits) rank
        the same ids with the same scores as ``vector_search`` / ``keyword_search``; keyword-only
        cosines are those of the stored vectors; ``chunks_for`` builds the stored chunks in key
        order. Failure: the store's candidate path drifted from its hit path."""
        source = candidate_search(filled)
        stored = {c.id: c for b in filled.iter_chunks() for c in b}
        query = unit_vector(11)
        pairs = [(filled.vector_search(query, 20), source.vector_candidates(query, 20))]
        if self._has(filled, "keyword"):
            words = " ".join(WORDS[:3])
            pairs.append((filled.keyword_search(words, 20), source.keyword_candidates(words, 20)))
        for hits, found in pairs:
            assert found.ids == ids(hits)
            assert all(
                math.isclose(a, h.score, abs_tol=1e-6)
                for a, h in zip(found.scores.tolist(), hits, strict=True)
            )
            built = source.chunks_for(found.keys, vectors=True)
            assert [c.id for c in built] == found.ids
            for c in built:
                assert (c.text, c.metadata) == (stored[c.id].text, stored[c.id].metadata)
            for cid, score in zip(found.ids, source.key_scores(found.keys, query), strict=True):
                vector = stored[cid].vector
                want = float("nan") if vector is None else cosine(vector, query)
                assert math.isclose(score, want, abs_tol=1e-5) or (
                    math.isnan(score) and math.isnan(want)
                ), f"key score of {cid}"

    def test_results_do_not_share_state_with_the_store(self, ready: Store) -> None:
        """What a store hands out is a copy: a caller editing a result cannot corrupt the store.
        Failure: get/search return the store's own metadata dicts or vector lists."""
        ready.upsert([chunk(1, extra={"k": [1]})])
        (got,) = ready.get(["chunk-1"])
        got.metadata.clear()
        (hit,) = ready.vector_search(unit_vector(1), 1)
        hit.chunk.metadata.clear()
        (again,) = ready.get(["chunk-1"])
        assert again.metadata == chunk(1, extra={"k": [1]}).metadata

    def test_vector_search_on_an_empty_store_returns_nothing(self, ready: Store) -> None:
        """An empty store answers with no hits, not an error."""
        assert ready.vector_search(unit_vector(1), 5) == []

    # -- keyword search ------------------------------------------------------------------------
    def test_keyword_search_finds_exact_terms(self, ready: Store) -> None:
        """A word in a chunk finds it; a word in no chunk finds nothing; scores are positive
        and sorted. Failure: bm25() sign not flipped (FTS5 ranks are negative)."""
        if not self._has(ready, "keyword"):
            with pytest.raises(CapabilityError):
                ready.keyword_search("x", 1)
            return
        ready.upsert(
            [
                chunk(1, text="the replica was promoted with pg_ctl"),
                chunk(2, text="deploys roll back with make rollback"),
                chunk(3, text="nothing relevant here"),
            ]
        )
        got = ready.keyword_search("replica", 10)
        assert ids(got) == ["chunk-1"] and got[0].score > 0
        assert ready.keyword_search("unicorn", 10) == []

    def test_keyword_search_ranks_more_matching_terms_higher(self, ready: Store) -> None:
        """With OR semantics, a chunk matching more query terms ranks above one matching fewer.
        Failure: AND semantics (nothing found) or phrase matching."""
        if not self._has(ready, "keyword"):
            return self.test_keyword_search_finds_exact_terms(ready)
        ready.upsert(
            [
                chunk(1, text="postgres replica lag alert tonight"),
                chunk(2, text="postgres backups are nightly and verified weekly"),
                chunk(3, text="kubernetes ingress controller settings for staging"),
            ]
        )
        got = ids(ready.keyword_search("postgres replica lag", 10))
        assert got[:2] == ["chunk-1", "chunk-2"]
        assert "chunk-3" not in got

    def test_keyword_ceiling_is_what_an_average_chunk_holding_each_word_scores(
        self, ready: Store
    ) -> None:
        """``keyword_ceiling`` (``KeywordCeiling``, when offered) is the keyword score of a chunk
        of average length holding each query word once: here every chunk is four words long and
        one holds "harbour" and "lantern" once each. A word no chunk holds adds nothing; a query
        of such words has no ceiling (None). Failure: the ceiling sums another idf than the
        ranking (hybrid fusion then mis-scales every keyword hit), or counts absent words."""
        if not isinstance(ready, KeywordCeiling):
            return  # fused on the relative scale instead
        fillers = ["stone bridge over water", "quiet morning with tea", "lantern light at dusk"]
        ready.upsert(
            [chunk(1, text="harbour lantern north wind")]
            + [chunk(2 + i, text=fillers[i % 3]) for i in range(9)]
        )
        best = ready.keyword_search("harbour lantern", 1)[0]
        assert best.chunk.id == "chunk-1"
        ceiling = ready.keyword_ceiling("harbour lantern")
        if ceiling is None:
            return  # it cannot tell (a view over a store without one): fused relatively
        assert ceiling == pytest.approx(best.score, rel=1e-6)
        assert ready.keyword_ceiling("harbour lantern unicorn") == pytest.approx(ceiling, rel=1e-6)
        assert ready.keyword_ceiling("unicorn") is None

    def test_keyword_search_is_sorted_and_limited(self, ready: Store) -> None:
        """Keyword hits come best first, at most ``k`` of them, scores never rising.
        Failure: the store ignores ``k`` or orders by something other than relevance."""
        if not self._has(ready, "keyword"):
            return
        ready.upsert(
            [
                chunk(i, text=" ".join(["needle"] * (1 + i % 4) + ["hay"] * (6 - i % 4)))
                for i in range(12)
            ]
        )
        hits = ready.keyword_search("needle", 3)
        assert len(hits) == 3, f"asked for 3 hits, got {len(hits)}"
        every = ready.keyword_search("needle", 50)
        assert len(every) == 12
        scores = [h.score for h in every]
        assert scores == sorted(scores, reverse=True), "hits unsorted"
        assert ids(hits) == ids(every)[:3] or [h.score for h in hits] == scores[:3]
        best = {h.chunk.id for h in every if h.score >= scores[0] - 1e-9}
        assert best <= {f"chunk-{i}" for i in range(12) if i % 4 == 3}, (
            "more matches must rank higher"
        )

    def test_filtered_keyword_search_is_exact_not_post_filtered(self, ready: Store) -> None:
        """A filter that keeps few chunks still returns the k best of those, even when better
        unfiltered chunks exist. Failure: the store post-filters a truncated top-k list."""
        if not (self._has(ready, "keyword") and self._has(ready, "filter")):
            return
        ready.upsert([chunk(i, text="needle needle", group="common") for i in range(40)])
        ready.upsert(
            [
                chunk(i, text="needle " + "other words " * (i - 38), group="rare")
                for i in range(40, 43)
            ]
        )
        got = ready.keyword_search("needle", 3, Eq(field="group", value="rare"))
        assert sorted(ids(got)) == ["chunk-40", "chunk-41", "chunk-42"]

    @pytest.mark.parametrize(
        "query",
        [
            '"',
            '""',
            "'",
            "*",
            "AND",
            "OR NOT",
            "NEAR(a b)",
            "a AND (b",
            "col:value",
            "^start",
            "-minus",
            "x* y*",
            "((",
            "{}[]",
            "\\",
            "%_",
            "\x00",
            "SELECT * FROM chunks; --",
            '" OR 1=1 --',
            "a\"b'c",
            "🦙",
            "   ",
        ],
    )
    def test_keyword_search_survives_query_syntax_characters(
        self, ready: Store, query: str
    ) -> None:
        """User text is never parsed as query syntax: quotes, operators, column filters, NUL.
        Failure: the query was spliced into FTS/SQL syntax unescaped (quote each term)."""
        if not self._has(ready, "keyword"):
            return
        ready.upsert([chunk(1, text="minus start value col near and or not select from chunks")])
        hits = ready.keyword_search(query, 5)
        assert all(h.score > 0 for h in hits)

    @pytest.mark.parametrize(
        ("text", "query"),
        [
            ("会议记录 数据库迁移 计划", "数据库迁移"),
            ("東京の天気は晴れです", "天気"),
            ("café crème brûlée", "crème"),
            ("naïve résumé", "résumé"),
            ("deploy 🚀 succeeded", "succeeded"),
            ("שלום עולם מה נשמע", "עולם"),
            ("مرحبا بالعالم", "بالعالم"),
            ("Ünïcödé STRAẞE", "ünïcödé"),
        ],
    )
    def test_keyword_search_handles_unicode(self, ready: Store, text: str, query: str) -> None:
        """CJK, accents, emoji and right-to-left scripts are searchable.
        Failure: a tokenizer that drops non-ASCII letters or does not segment CJK."""
        if not self._has(ready, "keyword"):
            return
        ready.upsert([chunk(1, text=text), chunk(2, text="unrelated english words")])
        assert ids(ready.keyword_search(query, 5))[:1] == ["chunk-1"]

    def test_keyword_search_on_punctuation_only_returns_nothing(self, ready: Store) -> None:
        """A query with no words has nothing to match: no hits, no error."""
        if not self._has(ready, "keyword"):
            return
        ready.upsert([chunk(1, text="words")])
        assert ready.keyword_search("?!.,;:-", 5) == []

    # -- filters -------------------------------------------------------------------------------
    @pytest.mark.parametrize("flt", SUITE_FILTERS, ids=lambda f: f.model_dump_json()[:80])
    def test_filters_follow_the_written_semantics(self, filled: Store, flt: Filter) -> None:
        """Vector, keyword and count honour filters exactly as engram.filters documents them
        (``ne`` matches missing fields, ``1 == 1.0`` but ``True != 1``, ranges on numbers and
        ISO dates, ``in []`` matches nothing). Failure: the backend's filter translation
        differs from ``engram.filters.matches`` for this filter."""
        every = [c for b in filled.iter_chunks() for c in b]
        expected = {c.id for c in every if matches(flt, c.metadata)}
        if not self._has(filled, "filter"):
            with pytest.raises(CapabilityError):
                filled.vector_search(unit_vector(1), 100, flt)
            return
        assert {h.chunk.id for h in filled.vector_search(unit_vector(1), 100, flt)} == expected
        assert filled.count(flt) == len(expected)
        if self._has(filled, "keyword"):
            # Every suite chunk text is drawn from the same small word list.
            words = " ".join(sorted({w for c in every for w in c.text.split()}))
            assert {h.chunk.id for h in filled.keyword_search(words, 100, flt)} == expected

    def test_filtered_vector_search_is_exact_not_post_filtered(self, ready: Store) -> None:
        """A filter that keeps few chunks still returns the k best of those, even when better
        unfiltered chunks exist. Failure: the store post-filters a truncated top-k list."""
        if not self._has(ready, "filter"):
            return
        ready.upsert([chunk(i, group="common") for i in range(40)])
        ready.upsert([chunk(i, group="rare") for i in range(40, 43)])
        got = ready.vector_search(unit_vector(1), 3, Eq(field="group", value="rare"))
        assert sorted(ids(got)) == ["chunk-40", "chunk-41", "chunk-42"]

    def test_filter_values_are_never_spliced_into_the_query(self, filled: Store) -> None:
        """A value such as ``x' OR '1'='1`` matches literally or not at all; it never widens
        the result. Failure: string concatenation into SQL or a where-clause."""
        if not self._has(filled, "filter"):
            return
        filled.upsert([chunk(100, group="x' OR '1'='1")])
        for value in ("x' OR '1'='1", "a' OR 1=1 --", '") OR true --', "%", "_"):
            got = {
                h.chunk.id
                for h in filled.vector_search(unit_vector(1), 100, Eq(field="group", value=value))
            }
            assert got <= {"chunk-100"}
        literal = Eq(field="group", value="x' OR '1'='1")
        assert ids(filled.vector_search(unit_vector(1), 100, literal)) == ["chunk-100"]

    def test_malformed_filters_raise_a_typed_error(self, filled: Store) -> None:
        """Malformed filters raise ``FilterError``; a field name that slipped past validation
        (built with model_construct) is refused or matches nothing — it never widens results.
        Failure: the backend trusts field names and splices them into its query language."""
        for bad in (
            {"op": "range", "field": "n"},
            {"op": "eq", "field": "a b", "value": 1},
            {"op": "gt", "field": "n", "value": 1},
            {"op": "range", "field": "n", "gt": "soon"},
        ):
            with pytest.raises(FilterError):
                parse_filter(bad)
        if not self._has(filled, "filter"):
            return
        evil = Eq.model_construct(field="group') OR 1=1 OR ('", value="zzz", op="eq")
        try:
            hits = filled.vector_search(unit_vector(1), 100, evil)
        except FilterError:
            return
        assert hits == []

    # -- identity ------------------------------------------------------------------------------
    def test_identity_is_recorded_and_a_different_one_refused(self, store: Store) -> None:
        """The first identity sticks; another embedder/model/dimension is ``IdentityMismatch``
        and leaves the store unchanged. Failure: identity silently overwritten."""
        assert store.get_identity() is None
        store.set_identity(IDENTITY)
        store.set_identity(IDENTITY)
        store.upsert([chunk(1)])
        with pytest.raises(IdentityMismatch) as err:
            store.set_identity(OTHER_IDENTITY)
        assert "suite" in str(err.value) and "other" in str(err.value)
        assert store.get_identity() == IDENTITY
        assert store.count() == 1

    def test_wrong_dimension_is_refused_and_nothing_changes(self, ready: Store) -> None:
        """A vector of another length is ``DimensionMismatch`` naming both numbers, for upsert
        and search; the batch it came in is not written. Failure: partial batch written."""
        ready.upsert([chunk(1)])
        bad = Chunk(id="bad", document_id="d", text="t", vector=[0.1] * (DIMENSION + 1))
        with pytest.raises(DimensionMismatch) as err:
            ready.upsert([chunk(2), bad])
        assert str(DIMENSION) in str(err.value) and str(DIMENSION + 1) in str(err.value)
        assert ids(ready.get(["chunk-1", "chunk-2", "bad"])) == ["chunk-1"]
        with pytest.raises(DimensionMismatch):
            ready.vector_search([0.1] * (DIMENSION - 1), 3)

    @pytest.mark.parametrize("bad_value", [math.nan, math.inf, -math.inf])
    def test_non_finite_vectors_are_rejected(self, ready: Store, bad_value: float) -> None:
        """NaN and infinite vectors are ``InvalidVector``; nothing of the batch is written.
        Failure: NaN stored, poisoning every later cosine."""
        vec = unit_vector(3)
        vec[2] = bad_value
        with pytest.raises(InvalidVector):
            ready.upsert([chunk(1), Chunk(id="nan", document_id="d", text="t", vector=vec)])
        assert ready.count() == 0
        with pytest.raises(InvalidVector):
            ready.vector_search(vec, 3)

    def test_identity_checks_name_the_kind_of_mismatch(self, store: Store) -> None:
        """Anything but an ``IndexIdentity`` is a ``StoreError`` naming the type; another vector
        length is ``DimensionMismatch`` naming the lengths and `engram rebuild`; the recorded
        identity stays. Failure: a check of the store's own instead of ``engram.check_identity``."""
        with pytest.raises(StoreError, match="IndexIdentity"):
            store.set_identity({"embedder": "suite"})  # type: ignore[arg-type]
        assert store.get_identity() is None
        store.set_identity(IDENTITY)
        wider = IDENTITY.model_copy(update={"dimension": DIMENSION + 1})
        with pytest.raises(DimensionMismatch) as err:
            store.set_identity(wider)
        message = str(err.value)
        assert f"{DIMENSION} dims" in message and f"{DIMENSION + 1} dims" in message
        assert "engram rebuild" in message
        assert store.get_identity() == IDENTITY

    def test_a_with_block_returns_the_store_and_closing_twice_is_safe(self, filled: Store) -> None:
        """``with store as s`` gives the store itself and closes it on the way out; a second
        ``close`` (here by ``reopen``) is harmless and the data is still there. Failure: a
        hand-written ``__enter__`` returning something else, or a close that is not idempotent
        (``engram.ClosingStore`` gives both)."""
        assert isinstance(filled, AbstractContextManager), (
            f"{type(filled).__name__} cannot be used in a `with` block; subclass "
            "engram.ClosingStore (it closes on leaving the block)"
        )
        with filled as same:
            assert same is filled
        if not self._has(filled, "persistent"):
            return
        again = self.reopen(filled)
        try:
            assert again.count() == 30
            assert again.get_identity() == IDENTITY
        finally:
            again.close()

    def test_vectors_before_identity_are_refused(self, store: Store) -> None:
        """A store learns its dimension from its identity; vectors before it are an error
        that says to call set_identity. Failure: a store that guesses the dimension."""
        with pytest.raises(Exception) as err:  # noqa: PT011 - any engram error with the fix
            store.upsert([chunk(1)])
        assert "identity" in str(err.value).lower()
        assert store.count() == 0

    # -- persistence and edge cases ------------------------------------------------------------
    def test_close_and_reopen_returns_the_same_data(self, filled: Store) -> None:
        """What was written survives close and reopen: chunks, vectors, documents, identity.
        Failure: writes not committed, or the identity not persisted."""
        filled.put_document(Document(id="doc-1", hash="h", metadata={"k": 1}))
        before = sorted(
            (c.id, c.text, tuple(c.vector or ())) for b in filled.iter_chunks() for c in b
        )
        if not self._has(filled, "persistent"):
            assert filled.count() == 30
            return
        again = self.reopen(filled)
        try:
            after = sorted(
                (c.id, c.text, tuple(c.vector or ())) for b in again.iter_chunks() for c in b
            )
            assert [a[:2] for a in after] == [b[:2] for b in before]
            assert all(
                math.isclose(x, y, abs_tol=1e-6)
                for a, b in zip(after, before, strict=True)
                for x, y in zip(a[2], b[2], strict=True)
            )
            assert again.get_identity() == IDENTITY
            assert again.list_documents()["doc-1"].metadata == {"k": 1}
            assert ids(again.vector_search(unit_vector(3), 1)) == ids(
                _reference_with([c for b in again.iter_chunks() for c in b]).vector_search(
                    unit_vector(3), 1
                )
            )
        finally:
            again.close()

    def test_very_large_and_empty_texts(self, ready: Store) -> None:
        """A 1 MB text and an empty text are stored and read back intact.
        Failure: a size limit in a column or in the keyword index."""
        big = ("lorem ipsum dolor " * 60_000)[:1_000_000] + " needle"
        ready.upsert([chunk(1, text=big), chunk(2, text="")])
        got = {c.id: c.text for c in ready.get(["chunk-1", "chunk-2"])}
        assert got == {"chunk-1": big, "chunk-2": ""}
        if self._has(ready, "keyword"):
            assert ids(ready.keyword_search("needle", 3)) == ["chunk-1"]

    @pytest.mark.parametrize(
        "odd_id",
        [
            "a/b/c.md#3",
            "with space",
            "quote'single",
            'quote"double',
            "semi;colon--",
            "ümlaut-ß",
            "emoji-🦙",
            "x" * 300,
            "%_*?",
            "back\\slash",
            "new\nline",
        ],
    )
    def test_ids_with_odd_characters(self, ready: Store, odd_id: str) -> None:
        """Any non-empty string is a valid id and document id.
        Failure: ids used in a path, a URL or a query without escaping."""
        c = chunk(1).model_copy(update={"id": odd_id, "document_id": odd_id})
        ready.upsert([c])
        assert ids(ready.get([odd_id])) == [odd_id]
        assert ids(ready.vector_search(c.vector or [], 1)) == [odd_id]
        ready.delete_documents([odd_id])
        assert ready.count() == 0

    def test_metadata_values_round_trip(self, ready: Store) -> None:
        """Metadata keeps its JSON types: ints stay ints, floats floats, lists, nested objects,
        None, booleans, unicode. Failure: a backend that stringifies or drops values."""
        meta: dict[str, Any] = {
            "i": 3,
            "f": 2.5,
            "b": False,
            "none": None,
            "s": "ünï",
            "list": [1, "a", True],
            "nested": {"a": {"b": [1, 2]}},
            "empty_list": [],
            "empty_obj": {},
            "big": 2**53,
        }
        ready.upsert([chunk(1).model_copy(update={"metadata": meta})])
        (got,) = ready.get(["chunk-1"])
        assert got.metadata == meta
        assert {k: type(v) for k, v in got.metadata.items()} == {
            k: type(v) for k, v in meta.items()
        }

    # -- the state machine ---------------------------------------------------------------------
    def test_state_machine_against_the_reference(self, store: Store) -> None:
        """Random upserts, deletes and searches leave the store observably equal to the exact
        reference store. Failure: the printed step list reproduces the divergence."""
        run_store_state_machine(store)


def _reference_with(chunks: list[Chunk]) -> MemoryStore:
    reference = MemoryStore(MemoryStoreOptions())
    reference.set_identity(IDENTITY)
    reference.upsert(chunks)
    return reference
