"""A hypothesis state machine that drives a store and the exact reference store side by side.

Budget: 50 examples of up to 30 steps by default (seconds per backend); set
``ENGRAM_THOROUGH=1`` for 300 examples of up to 60 steps.
"""

from __future__ import annotations

import math
import os

from hypothesis import HealthCheck, Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    rule,
    run_state_machine_as_test,
)

from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.filters import Contains, Eq, Filter, In, Ne, Not, Range
from engram.models import Chunk, Document
from engram.protocols import Store
from engram.testing.data import DIMENSION, IDENTITY, WORDS, unit_vector

DOCS = [f"doc-{i}" for i in range(4)]

# At least one word: empty texts are covered by the suite, and here they would never match.
texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map(" ".join)
metadata = st.fixed_dictionaries(
    {"group": st.sampled_from(["a", "b"]), "n": st.integers(0, 9)},
    optional={"tags": st.lists(st.sampled_from(["x", "y"]), max_size=2), "flag": st.booleans()},
)
# Vectors first: hypothesis leans to the first option, and searches need vectors to compare.
vectors = st.one_of(st.integers(0, 30).map(unit_vector), st.none())
contents = st.tuples(st.sampled_from(DOCS), texts, vectors, metadata)
filters: st.SearchStrategy[Filter | None] = st.one_of(
    st.none(),
    st.sampled_from(["a", "b"]).map(lambda g: Eq(field="group", value=g)),
    st.sampled_from(["a", "b"]).map(lambda g: Ne(field="group", value=g)),
    st.integers(0, 9).map(lambda n: Range(field="n", gte=n)),
    st.sampled_from(["x", "y"]).map(lambda t: Contains(field="tags", value=t)),
    st.lists(st.integers(0, 9), max_size=3).map(lambda ns: In(field="n", values=list(ns))),
    st.booleans().map(lambda b: Not(filter=Eq(field="flag", value=b))),
)


def _budget() -> settings:
    thorough = os.environ.get("ENGRAM_THOROUGH") == "1"
    return settings(
        # The explain phase alone takes minutes on a failing store; shrinking is enough.
        phases=[p for p in Phase if p is not Phase.explain],
        report_multiple_bugs=False,
        max_examples=300 if thorough else 50,
        stateful_step_count=60 if thorough else 30,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=not thorough,
    )


class StoreComparison(RuleBasedStateMachine):
    """Every rule applies to both stores; every check compares what a user could observe."""

    store_under_test: Store

    def __init__(self) -> None:
        super().__init__()
        self.store = self.store_under_test
        self.reference = MemoryStore(MemoryStoreOptions())

    @initialize()
    def start_empty(self) -> None:
        self.store.reset()
        self.written: list[str] = []
        for s in (self.store, self.reference):
            s.set_identity(IDENTITY)

    @rule(batch=st.lists(contents, min_size=1, max_size=6))
    def upsert_new(
        self, batch: list[tuple[str, str, list[float] | None, dict[str, object]]]
    ) -> None:
        """Fresh ids every time, so the store fills up and searches have several hits."""
        chunks = []
        for doc, text, vector, meta in batch:
            chunk_id = f"id-{len(self.written)}"
            self.written.append(chunk_id)
            chunks.append(
                Chunk(
                    id=chunk_id,
                    document_id=doc,
                    text=text,
                    vector=vector,
                    metadata=meta,
                    document_hash="h",
                )
            )
        for s in (self.store, self.reference):
            s.upsert(chunks)

    @rule(data=st.data(), content=contents)
    def overwrite(
        self, data: st.DataObject, content: tuple[str, str, list[float] | None, dict[str, object]]
    ) -> None:
        if not self.written:
            return
        chunk_id = data.draw(st.sampled_from(self.written), label="id")
        doc, text, vector, meta = content
        chunk = Chunk(
            id=chunk_id, document_id=doc, text=text, vector=vector, metadata=meta, document_hash="h"
        )
        for s in (self.store, self.reference):
            s.upsert([chunk])

    @rule(data=st.data())
    def delete(self, data: st.DataObject) -> None:
        pool = [*self.written, "never-written"]
        victims = data.draw(
            st.lists(st.sampled_from(pool), min_size=1, max_size=3), label="victims"
        )
        for s in (self.store, self.reference):
            s.delete(victims)

    @rule(docs=st.lists(st.sampled_from(DOCS), min_size=1, max_size=2))
    def delete_documents(self, docs: list[str]) -> None:
        for s in (self.store, self.reference):
            s.delete_documents(docs)

    @rule(flt=filters.filter(lambda f: f is not None))
    def delete_where(self, flt: Filter) -> None:
        if "filter" not in self.store.capabilities:
            return
        for s in (self.store, self.reference):
            s.delete_where(flt)

    @rule(doc=st.sampled_from(DOCS), digest=st.sampled_from(["1", "2"]))
    def put_document(self, doc: str, digest: str) -> None:
        for s in (self.store, self.reference):
            s.put_document(Document(id=doc, hash=digest))

    @rule(seed=st.integers(100, 200), k=st.integers(1, 15), flt=filters)
    def vector_search_agrees(self, seed: int, k: int, flt: Filter | None) -> None:
        if flt is not None and "filter" not in self.store.capabilities:
            return
        query = unit_vector(seed)
        got = self.store.vector_search(query, k, flt)
        expected = self.reference.vector_search(query, k, flt)
        assert len(got) == len(expected), (
            f"vector_search returned {len(got)} hits, reference {len(expected)}"
        )
        for g, e in zip(got, expected, strict=True):
            assert math.isclose(g.score, e.score, abs_tol=1e-4), (
                f"{g.chunk.id}={g.score} vs {e.chunk.id}={e.score}"
            )

    @rule(words=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3), flt=filters)
    def keyword_search_finds_the_same_chunks(self, words: list[str], flt: Filter | None) -> None:
        if "keyword" not in self.store.capabilities:
            return
        if flt is not None and "filter" not in self.store.capabilities:
            return
        query = " ".join(words)
        every = len(self.written) + 1
        got = {h.chunk.id for h in self.store.keyword_search(query, every, flt)}
        expected = {h.chunk.id for h in self.reference.keyword_search(query, every, flt)}
        assert got == expected, (
            f"keyword {query!r} matched {sorted(got)}, reference {sorted(expected)}"
        )

    @invariant()
    def same_contents(self) -> None:
        if not hasattr(self, "written"):
            return  # before initialize
        assert self.store.count() == self.reference.count()
        got = {c.id: (c.document_id, c.text, c.metadata) for c in self.store.get(self.written)}
        expected = {
            c.id: (c.document_id, c.text, c.metadata) for c in self.reference.get(self.written)
        }
        assert got == expected
        assert {k: d.hash for k, d in self.store.list_documents().items()} == {
            k: d.hash for k, d in self.reference.list_documents().items()
        }


def run_store_state_machine(store: Store) -> None:
    assert IDENTITY.dimension == DIMENSION
    bound = type("StoreComparison", (StoreComparison,), {"store_under_test": store})
    run_state_machine_as_test(bound, settings=_budget())
