"""Keyword search: BM25 scores checked against an independent implementation of the formula, the
same matches as the reference store, and a keyword index that stays in step with the collection
whoever writes to it: the store itself, a second client, another process, a write still
landing, a reset, a lost index file."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Chunk, Eq, IndexIdentity, MemoryStore, tokenize
from engram.testing.data import WORDS
from engram_chroma import changelog, records
from engram_chroma.keyword import match_expression
from engram_chroma.store import ChromaStore

MakeStore = Callable[..., ChromaStore]
IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="markdown:400/80")
K1, B = 1.2, 0.75


def doc(i: int, text: str, **metadata: object) -> Chunk:
    return Chunk(
        id=f"c{i}", document_id=f"d{i % 3}", text=text, vector=[1, i, 0, 0], metadata=metadata
    )


def fts5_bm25(texts: dict[str, str], query: str) -> dict[str, float]:
    """FTS5's bm25() written out: idf = ln((N - n + 0.5) / (n + 0.5)), at least 1e-6."""
    tokens = {i: tokenize(t) for i, t in texts.items()}
    total = len(tokens)
    average = sum(len(t) for t in tokens.values()) / total
    scores: dict[str, float] = {}
    for term in dict.fromkeys(tokenize(query)):
        holders = [i for i, t in tokens.items() if term in t]
        if not holders:
            continue
        idf = max(math.log((total - len(holders) + 0.5) / (len(holders) + 0.5)), 1e-6)
        for i in holders:
            tf = Counter(tokens[i])[term]
            norm = K1 * (1 - B + B * len(tokens[i]) / average)
            scores[i] = scores.get(i, 0.0) + idf * tf * (K1 + 1) / (tf + norm)
    return scores


def test_scores_are_bm25_over_every_chunk(store: ChromaStore) -> None:
    texts = {
        "c1": "postgres replica lag alert tonight replica",
        "c2": "postgres backups are nightly",
        "c3": "kubernetes ingress controller settings for staging and postgres",
        "c4": "nothing to see",
        "c5": "replica",
    }
    store.upsert([doc(int(i[1:]), t) for i, t in texts.items()])
    for query in ("postgres replica lag", "nothing", "ingress staging", "replica replica"):
        expected = fts5_bm25(texts, query)
        got = store.keyword_search(query, 10)
        assert {h.chunk.id for h in got} == set(expected)
        for hit in got:
            assert hit.score > 0 and hit.keyword_score == hit.score
            assert math.isclose(hit.score, expected[hit.chunk.id], rel_tol=1e-9)
        assert [h.score for h in got] == sorted((h.score for h in got), reverse=True)


def test_a_filter_removes_hits_and_never_changes_a_score(store: ChromaStore) -> None:
    store.upsert([doc(i, f"alpha {'bravo ' * i}", keep=i % 2 == 0) for i in range(1, 9)])
    everything = {h.chunk.id: h.score for h in store.keyword_search("alpha bravo", 20)}
    kept = store.keyword_search("alpha bravo", 20, Eq(field="keep", value=True))
    assert {h.chunk.id for h in kept} == {"c2", "c4", "c6", "c8"}
    assert all(math.isclose(h.score, everything[h.chunk.id]) for h in kept)
    assert [
        h.chunk.id for h in store.keyword_search("alpha bravo", 2, Eq(field="keep", value=True))
    ] == [h.chunk.id for h in kept[:2]]


def test_user_text_is_never_query_syntax() -> None:
    assert match_expression('say "hi" OR NEAR(x y) col:v ^a -b *') == (
        '"say" OR "hi" OR "or" OR "near" OR "x" OR "y" OR "col" OR "v" OR "a" OR "b"'
    )
    assert match_expression("?!., \x00 _") is None


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    texts=st.lists(st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join), max_size=12),
    query=st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join),
)
def test_matches_are_the_reference_stores(store: ChromaStore, texts: list[str], query: str) -> None:
    store.delete([c.id for b in store.iter_chunks() for c in b])
    chunks = [doc(i, t) for i, t in enumerate(texts)]
    reference = MemoryStore()
    reference.set_identity(IDENTITY)
    for s in (store, reference):
        s.upsert(chunks)
    got = {h.chunk.id for h in store.keyword_search(query, 50)}
    assert got == {h.chunk.id for h in reference.keyword_search(query, 50)}


def test_two_clients_see_each_others_writes_and_deletes(make_store: MakeStore) -> None:
    """Two stores on one collection (two keyword indexes) agree after every kind of write."""
    a = make_store()
    a.set_identity(IDENTITY)
    b = make_store()
    assert b.keyword_search("walrus", 10) == []
    a.upsert([doc(i, f"walrus number{i}", group="g" if i < 3 else "h") for i in range(6)])
    assert {h.chunk.id for h in b.keyword_search("walrus", 10)} == {f"c{i}" for i in range(6)}
    a.upsert([doc(0, "zebra now")])
    assert "c0" not in {h.chunk.id for h in b.keyword_search("walrus", 10)}
    assert [h.chunk.id for h in b.keyword_search("zebra", 10)] == ["c0"]
    a.delete(["c1"])
    a.delete_documents(["d2"])  # c2 and c5
    a.delete_where(Eq(field="group", value="h"))  # c3 (c4 is in d1, group h)
    assert {h.chunk.id for h in b.keyword_search("walrus zebra", 10)} == {"c0"}
    b.upsert([doc(7, "walrus from b")])
    assert {h.chunk.id for h in a.keyword_search("walrus", 10)} == {"c7"}
    a.reset()
    assert b.keyword_search("walrus zebra", 10) == []
    b.set_identity(IDENTITY)
    b.upsert([doc(8, "after the reset")])
    assert [h.chunk.id for h in a.keyword_search("reset", 10)] == ["c8"]


def test_a_write_still_landing_is_found_once_it_lands(
    store: ChromaStore, make_store: MakeStore
) -> None:
    """A reader that sees a write announced before its data arrives keeps it pending and finds
    the data at a later search (as when the writer is slow, or dies after writing)."""
    reader = make_store()
    store.upsert([doc(1, "before")])
    assert [h.chunk.id for h in reader.keyword_search("before", 5)] == ["c1"]
    cols = store.collections
    stamp = changelog.new_stamp()
    changelog.announce(cols.log, stamp, "upsert", ["c2"])
    assert reader.keyword_search("late", 5) == []  # announced, not landed: pending
    cols.chunks.upsert(
        ids=["c2"],
        embeddings=np.asarray([[1, 0, 0, 0]], dtype=np.float32),
        documents=["late arrival"],
        metadatas=[
            {
                **records.chunk_metadata(
                    {}, owner="c2", document_id="d", document_hash="", has_vector=True
                ),
                records.STAMP_KEY: stamp,
            }
        ],
    )
    assert [h.chunk.id for h in reader.keyword_search("late", 5)] == ["c2"]


WRITER = textwrap.dedent(
    """
    import json, sys
    from engram.models import Chunk, IndexIdentity
    from engram_chroma.store import ChromaStore
    from engram_chroma import ChromaOptions
    options = ChromaOptions.model_validate_json(sys.argv[1])
    store = ChromaStore(options)
    store.set_identity(IndexIdentity.model_validate_json(sys.argv[2]))
    store.upsert([Chunk(id=f"p{i}", document_id="proc", text=f"from another process {i}",
                        vector=[1.0, 0.0, 0.0, float(i)]) for i in range(5)])
    store.delete(["p0"])
    store.close()
    """
)


def test_a_writer_in_another_process(store: ChromaStore) -> None:
    store.upsert([doc(1, "local process")])
    assert [h.chunk.id for h in store.keyword_search("process", 10)] == ["c1"]
    embedded = store.options.mode == "embedded"
    if embedded:
        store.close()  # Chroma's embedded mode is one process at a time
    subprocess.run(
        [sys.executable, "-c", WRITER, store.options.model_dump_json(), IDENTITY.model_dump_json()],
        check=True,
        timeout=120,
    )
    reader = ChromaStore(store.options) if embedded else store
    try:
        found = {h.chunk.id for h in reader.keyword_search("process", 10)}
        assert found == {"c1", "p1", "p2", "p3", "p4"}
    finally:
        if embedded:
            reader.close()


def test_the_index_file_is_a_cache(store: ChromaStore, tmp_path: Path) -> None:
    """An embedded store keeps its keyword index beside the data; losing it costs a rebuild."""
    store.upsert([doc(i, f"kept word{i}") for i in range(4)])
    if store.options.mode != "embedded":
        assert store.diagnostics()["keyword_index"] == "memory"
        return
    path = Path(store.diagnostics()["keyword_index"])
    assert path.is_file()
    options = store.options
    store.close()
    again = ChromaStore(options)
    assert len(again.keyword_search("kept", 10)) == 4
    again.close()
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)
    rebuilt = ChromaStore(options)
    try:
        assert {h.chunk.id for h in rebuilt.keyword_search("word2 kept", 10)} == {
            f"c{i}" for i in range(4)
        }
        assert rebuilt.keyword_search("word2", 10)[0].chunk.id == "c2"
    finally:
        rebuilt.close()
