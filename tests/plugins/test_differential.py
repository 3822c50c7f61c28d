"""The SQLite store against the exact in-memory reference store, on the same random data."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.filters import Eq, In, Not, Or, Range
from engram.models import Chunk, IndexIdentity
from engram_sqlite import SQLiteOptions, SQLiteStore

DIM = 16
IDENTITY = IndexIdentity(embedder="test", model="random", dimension=DIM, chunker="none")
WORDS = [
    "alpha",
    "bravo",
    "charlie",
    "delta",
    "echo",
    "foxtrot",
    "golf",
    "hotel",
    "india",
    "juliet",
]


def _corpus(seed: int, n: int) -> list[Chunk]:
    rng = np.random.default_rng(seed)
    chunks = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(3, 12)))
        chunks.append(
            Chunk(
                id=f"c{i}",
                document_id=f"d{i % 7}",
                text=" ".join(words),
                vector=[float(x) for x in rng.normal(size=DIM)],
                metadata={
                    "n": int(i),
                    "group": ["a", "b", "c"][i % 3],
                    "day": f"2026-01-{1 + i % 28:02}",
                },
            )
        )
    return chunks


FILTERS = [
    None,
    Eq(field="group", value="a"),
    Not(filter=Eq(field="group", value="b")),
    Or(filters=[In(field="group", values=["c"]), Range(field="n", lt=10)]),
    Range(field="day", gte="2026-01-10", lt="2026-01-20"),
]


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 120),
    k=st.integers(1, 15),
    fi=st.integers(0, len(FILTERS) - 1),
)
def test_vector_top_k_matches_the_reference_store(
    tmp_path: Path, seed: int, n: int, k: int, fi: int
) -> None:
    chunks = _corpus(seed, n)
    reference = MemoryStore(MemoryStoreOptions())
    sqlite = SQLiteStore(SQLiteOptions(path=Path(":memory:")))
    try:
        for store in (reference, sqlite):
            store.set_identity(IDENTITY)
            store.upsert(chunks)
        query = [float(x) for x in np.random.default_rng(seed + 1).normal(size=DIM)]
        expected = reference.vector_search(query, k, FILTERS[fi])
        got = sqlite.vector_search(query, k, FILTERS[fi])
        assert [h.chunk.id for h in got] == [h.chunk.id for h in expected]
        assert np.allclose([h.score for h in got], [h.score for h in expected], atol=1e-5)
    finally:
        sqlite.close()
        reference.close()


def test_keyword_search_finds_the_same_documents_as_the_reference(tmp_path: Path) -> None:
    chunks = _corpus(7, 80)
    reference = MemoryStore(MemoryStoreOptions())
    sqlite = SQLiteStore(SQLiteOptions(path=tmp_path / "k.sqlite"))
    try:
        for store in (reference, sqlite):
            store.set_identity(IDENTITY)
            store.upsert(chunks)
        for query in ("alpha", "golf hotel", "juliet echo delta"):
            ref = reference.keyword_search(query, 100)
            got = sqlite.keyword_search(query, 100)
            assert {h.chunk.id for h in got} == {h.chunk.id for h in ref}
            # Both rank by BM25; the very best match must agree.
            assert got[0].chunk.id in {h.chunk.id for h in ref if h.score >= ref[0].score - 1e-9}
    finally:
        sqlite.close()
        reference.close()
