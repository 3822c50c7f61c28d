"""``replace_document`` writes only what an edit changed: rows, FTS entries and vectors of the
chunks that stayed are left as they are, a new chunk takes a dropped one's row, and search finds
exactly the new text."""

from __future__ import annotations

import sqlite3

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Chunk, Document
from engram_sqlite import SQLiteStore

WORDS = ("apple", "banana", "cherry", "damson", "elder", "fig", "grape", "hazel")


def doc_chunk(cid: str, text: str, vec: list[float], doc: str = "doc", digest: str = "h1") -> Chunk:
    return Chunk(
        id=cid, document_id=doc, document_hash=digest, text=text, vector=vec, metadata={"n": cid}
    )


def rows(conn: sqlite3.Connection) -> dict[str, tuple[int, int | None]]:
    """Each chunk id → (rowid, the generation of its vector row)."""
    return {
        cid: (rowid, generation)
        for cid, rowid, generation in conn.execute(
            "SELECT c.id, c.rowid, v.generation FROM chunks c LEFT JOIN vectors v USING (rowid)"
        )
    }


def keyword_ids(store: SQLiteStore, word: str) -> set[str]:
    return {h.chunk.id for h in store.keyword_search(word, 50)}


def fts_intact(conn: sqlite3.Connection) -> None:
    """The FTS index is consistent, and every index of the tables matches its rows (an
    UPDATE sets only the columns that differ)."""
    conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 0)")
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    assert {r[0] for r in conn.execute("SELECT id FROM chunks WHERE document_id = 'doc'")} == {
        r[0] for r in conn.execute("SELECT id FROM chunks NOT INDEXED WHERE document_id = 'doc'")
    }


def test_an_edit_rewrites_only_the_chunk_that_changed(store: SQLiteStore) -> None:
    a = doc_chunk("a", "apple orchard", [1, 0, 0, 0])
    b = doc_chunk("b", "banana grove", [0, 1, 0, 0])
    c = doc_chunk("c", "cherry hill", [0, 0, 1, 0])
    store.replace_document(Document(id="doc", hash="h1"), [a, b, c])
    conn = store.connection
    before = rows(conn)
    tombstones = conn.execute("SELECT count(*) FROM vector_tombstones").fetchone()[0]

    edited = doc_chunk("b2", "banana bread", [0, 0, 0, 1], digest="h2")
    kept = [x.model_copy(update={"document_hash": "h2"}) for x in (a, c)]
    store.replace_document(Document(id="doc", hash="h2"), [kept[0], edited, kept[1]])

    after = rows(conn)
    assert set(after) == {"a", "b2", "c"}
    assert after["a"] == before["a"] and after["c"] == before["c"]  # vectors not rewritten
    assert after["b2"][0] == before["b"][0]  # the dropped chunk's row, no new one
    assert conn.execute("SELECT count(*) FROM vector_tombstones").fetchone()[0] == tombstones
    assert store.get(["a", "b2", "c"]) == [kept[0], edited, kept[1]]
    assert keyword_ids(store, "grove") == set()
    assert keyword_ids(store, "bread") == keyword_ids(store, "banana") == {"b2"}
    assert keyword_ids(store, "apple") == {"a"}
    assert [h.chunk.id for h in store.vector_search([0, 0, 0, 1], 1)] == ["b2"]
    assert [h.chunk.id for h in store.vector_search([0, 1, 0, 0], 1)] != ["b"]
    fts_intact(conn)


def test_the_same_chunks_again_write_no_chunk_row(store: SQLiteStore) -> None:
    chunks = [doc_chunk("a", "apple", [1, 0, 0, 0]), doc_chunk("b", "banana", [0, 1, 0, 0])]
    store.replace_document(Document(id="doc", hash="h1"), chunks)
    conn = store.connection
    before = rows(conn)
    changes = conn.total_changes
    store.replace_document(Document(id="doc", hash="h1"), chunks)
    # The generation, the record and the documents token: three rows, no chunk, vector or FTS.
    assert conn.total_changes - changes == 3
    assert rows(conn) == before


def test_added_and_dropped_chunks_leave_search_exact(store: SQLiteStore) -> None:
    one = [doc_chunk("a", "apple", [1, 0, 0, 0]), doc_chunk("b", "banana", [0, 1, 0, 0])]
    store.replace_document(Document(id="doc", hash="h1"), one)
    more = [*one, doc_chunk("c", "cherry", [0, 0, 1, 0]), doc_chunk("d", "damson", [0, 0, 0, 1])]
    store.replace_document(Document(id="doc", hash="h2"), more)
    assert keyword_ids(store, "damson") == {"d"}
    store.replace_document(Document(id="doc", hash="h3"), [doc_chunk("e", "elder", [1, 1, 0, 0])])
    assert {c.id for batch in store.iter_chunks() for c in batch} == {"e"}
    for word in ("apple", "banana", "cherry", "damson"):
        assert keyword_ids(store, word) == set()
    assert keyword_ids(store, "elder") == {"e"}
    assert [h.chunk.id for h in store.vector_search([0, 0, 0, 1], 5)] == ["e"]
    fts_intact(store.connection)


def test_a_chunk_stored_under_another_document_moves_to_this_one(store: SQLiteStore) -> None:
    store.replace_document(Document(id="other", hash="h"), [doc_chunk("x", "fig", [1, 0, 0, 0])])
    moved = doc_chunk("x", "fig", [1, 0, 0, 0])
    store.replace_document(Document(id="doc", hash="h"), [moved])
    assert store.get(["x"]) == [moved]
    assert keyword_ids(store, "fig") == {"x"}
    fts_intact(store.connection)


texts = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)
versions = st.lists(st.lists(texts, max_size=4, unique=True), min_size=1, max_size=5)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(versions=versions)
def test_any_sequence_of_edits_leaves_rows_fts_and_vectors_exact(
    store: SQLiteStore, versions: list[list[str]]
) -> None:
    """Whatever the edits (chunks kept, changed, added, dropped, reordered), every word finds
    exactly the chunks that hold it now, and every vector search its own chunk."""
    store.replace_document(Document(id="doc", hash=""), [])
    for n, version in enumerate(versions):
        chunks = [
            doc_chunk(f"{text}#", text, [1.0 + WORDS.index(text.split()[0]), 1, n, i % 2])
            for i, text in enumerate(version)
        ]
        store.replace_document(Document(id="doc", hash=f"h{n}"), chunks)
        stored = {c.id: c for batch in store.iter_chunks() for c in batch}
        assert stored == {c.id: c for c in chunks}
        for word in WORDS:
            assert keyword_ids(store, word) == {c.id for c in chunks if word in c.text.split()}
        for c in chunks:
            assert c.vector is not None
            best = store.vector_search(c.vector, 1)[0]
            assert best.score > 0.999
        fts_intact(store.connection)
