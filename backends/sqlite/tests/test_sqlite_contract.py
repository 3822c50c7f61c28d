"""The Store contract on a real SQLite file: writes, reads, deletes, documents, identity, reset."""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pluggy
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import (
    Chunk,
    DimensionMismatch,
    Document,
    Eq,
    Hit,
    IdentityMismatch,
    In,
    IndexIdentity,
    InvalidVector,
    Store,
    StoreError,
    bulk_stamp,
)
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite.migrations import LATEST

IDENTITY = IndexIdentity(embedder="hash", model="h-4", dimension=4, chunker="markdown:400/80")

MakeStore = Callable[..., SQLiteStore]


def chunk(
    cid: str, text: str = "alpha", doc: str = "doc", vec: list[float] | None = None, **meta: object
) -> Chunk:
    return Chunk(id=cid, document_id=doc, text=text, vector=vec, metadata=dict(meta))


def ids(hits: list[Hit]) -> list[str]:
    return [h.chunk.id for h in hits]


def test_is_a_store_with_declared_capabilities(store: SQLiteStore) -> None:
    assert isinstance(store, Store)
    assert store.capabilities == frozenset({"vector", "keyword", "filter", "persistent"})


def test_upsert_then_get_round_trips_every_field(store: SQLiteStore) -> None:
    c = Chunk(
        id="c1",
        document_id="notes/a.md",
        document_hash="sha256:abc",
        text="Hello world",
        vector=[0.5, -0.25, 1.0, 0.0],
        metadata={"tags": ["x", "y"], "n": 3, "f": 1.5, "ok": True, "none": None, "o": {"k": "v"}},
    )
    store.upsert([c])
    assert store.get(["c1"]) == [c]


def test_upsert_is_idempotent_and_overwrites(store: SQLiteStore) -> None:
    first = chunk("c1", "old words", vec=[1, 0, 0, 0], kind="a")
    store.upsert([first])
    store.upsert([first])
    assert store.count() == 1
    second = chunk("c1", "new text entirely", vec=[0, 1, 0, 0], kind="b")
    store.upsert([second])
    assert store.count() == 1
    assert store.get(["c1"]) == [second]
    assert store.keyword_search("old words", 5) == []
    assert ids(store.keyword_search("entirely", 5)) == ["c1"]
    assert store.count(Eq(field="kind", value="a")) == 0
    [hit] = store.vector_search([0, 1, 0, 0], 5)
    assert hit.chunk.id == "c1"
    assert hit.score == pytest.approx(1.0)


def test_upsert_can_drop_a_vector(store: SQLiteStore) -> None:
    store.upsert([chunk("c1", vec=[1, 0, 0, 0])])
    store.upsert([chunk("c1", vec=None)])
    assert store.vector_search([1, 0, 0, 0], 5) == []
    assert store.get(["c1"])[0].vector is None


def test_upsert_does_not_mutate_its_input(store: SQLiteStore) -> None:
    meta = {"tags": ["a"], "nested": {"k": [1, 2]}}
    c = Chunk(id="c1", document_id="d", text="t", vector=[1.0, 2.0, 3.0, 4.0], metadata=meta)
    before = copy.deepcopy(c.model_dump())
    store.upsert([c])
    assert c.model_dump() == before


def test_get_keeps_order_and_drops_unknown(store: SQLiteStore) -> None:
    store.upsert([chunk(f"c{i}") for i in range(5)])
    got = store.get(["c3", "nope", "c0", "c4", "c3"])
    assert [c.id for c in got] == ["c3", "c0", "c4", "c3"]
    assert store.get([]) == []


def test_delete_removes_from_vector_and_keyword_results(store: SQLiteStore) -> None:
    store.upsert(
        [
            chunk("a", "shared word apple", vec=[1, 0, 0, 0]),
            chunk("b", "shared word", vec=[1, 1, 0, 0]),
        ]
    )
    store.delete(["a", "unknown"])
    assert ids(store.vector_search([1, 0, 0, 0], 10)) == ["b"]
    assert ids(store.keyword_search("shared apple", 10)) == ["b"]
    assert store.keyword_search("apple", 10) == []
    assert store.get(["a"]) == []
    store.delete([])
    store.delete(["never-existed"])
    assert store.count() == 1


def test_delete_documents_removes_chunks_and_records(store: SQLiteStore) -> None:
    store.upsert(
        [
            chunk("a1", "apple one", doc="A", vec=[1, 0, 0, 0]),
            chunk("a2", "apple two", doc="A", vec=[0, 1, 0, 0]),
            chunk("b1", "apple three", doc="B", vec=[0, 0, 1, 0]),
        ]
    )
    store.put_document(Document(id="A", hash="h1"))
    store.put_document(Document(id="B", hash="h2"))
    store.delete_documents(["A", "missing"])
    assert set(store.list_documents()) == {"B"}
    assert ids(store.keyword_search("apple", 10)) == ["b1"]
    assert ids(store.vector_search([1, 1, 1, 0], 10)) == ["b1"]


def test_delete_where_removes_matching_chunks_everywhere(store: SQLiteStore) -> None:
    store.upsert(
        [
            chunk("a", "apple", vec=[1, 0, 0, 0], kind="tmp"),
            chunk("b", "apple", vec=[1, 0, 0, 0], kind="keep"),
            chunk("c", "apple", vec=[1, 0, 0, 0]),
        ]
    )
    store.delete_where(In(field="kind", values=["tmp", "other"]))
    assert sorted(ids(store.keyword_search("apple", 10))) == ["b", "c"]
    assert sorted(ids(store.vector_search([1, 0, 0, 0], 10))) == ["b", "c"]
    assert store.count() == 2


def test_count_with_and_without_filter(store: SQLiteStore) -> None:
    assert store.count() == 0
    store.upsert([chunk("a", kind="x"), chunk("b", kind="y"), chunk("c")])
    assert store.count() == 3
    assert store.count(Eq(field="kind", value="x")) == 1


def test_iter_chunks_yields_everything_in_batches(store: SQLiteStore) -> None:
    chunks = [chunk(f"c{i:02}", f"text {i}", vec=[i, 1, 0, 0]) for i in range(23)]
    store.upsert(chunks)
    batches = list(store.iter_chunks(batch_size=5))
    assert [len(b) for b in batches] == [5, 5, 5, 5, 3]
    assert [c for b in batches for c in b] == chunks
    with pytest.raises(StoreError, match="batch_size"):
        list(store.iter_chunks(batch_size=0))


def test_documents_keep_one_record_per_id(store: SQLiteStore) -> None:
    store.put_document(Document(id="a.md", hash="1", metadata={"title": "A"}))
    store.put_document(Document(id="a.md", hash="2"))
    store.put_document(Document(id="b.md", hash="3"))
    assert store.list_documents() == {
        "a.md": Document(id="a.md", hash="2"),
        "b.md": Document(id="b.md", hash="3"),
    }


def test_reset_makes_the_store_as_new(store: SQLiteStore) -> None:
    store.upsert([chunk("a", "apple", vec=[1, 0, 0, 0])])
    store.put_document(Document(id="d", hash="h"))
    store.reset()
    assert store.count() == 0
    assert store.list_documents() == {}
    assert store.get_identity() is None
    assert store.keyword_search("apple", 5) == []
    assert store.vector_search([1, 0, 0, 0], 5) == []
    other = IndexIdentity(embedder="x", model="y", dimension=2, chunker="z")
    store.set_identity(other)
    store.upsert([chunk("b", "banana", vec=[1, 0])])
    assert ids(store.vector_search([1, 0], 5)) == ["b"]
    assert ids(store.keyword_search("banana", 5)) == ["b"]


# -- identity -----------------------------------------------------------------------------------


def test_identity_is_recorded_once(make_store: MakeStore) -> None:
    s = make_store()
    assert s.get_identity() is None
    s.set_identity(IDENTITY)
    s.set_identity(IDENTITY)
    assert s.get_identity() == IDENTITY


def test_other_identity_is_refused_naming_both_and_the_fix(store: SQLiteStore) -> None:
    other = IDENTITY.model_copy(update={"model": "h-4-v2"})
    with pytest.raises(IdentityMismatch) as info:
        store.set_identity(other)
    assert not isinstance(info.value, DimensionMismatch)
    message = str(info.value)
    assert IDENTITY.describe() in message
    assert other.describe() in message
    assert "engram rebuild" in message
    assert store.get_identity() == IDENTITY


def test_other_dimension_is_a_dimension_mismatch(store: SQLiteStore) -> None:
    with pytest.raises(DimensionMismatch, match="engram rebuild"):
        store.set_identity(IDENTITY.model_copy(update={"dimension": 8}))


def test_wrong_vector_length_names_both_numbers_and_the_fix(store: SQLiteStore) -> None:
    with pytest.raises(DimensionMismatch) as info:
        store.upsert([chunk("ok", vec=[1, 0, 0, 0]), chunk("bad", vec=[1.0] * 7)])
    message = str(info.value)
    assert "7 dimensions" in message
    assert "4-dimension" in message
    assert "engram rebuild" in message
    assert "hash/h-4" in message
    assert store.count() == 0
    with pytest.raises(DimensionMismatch, match="query vector"):
        store.vector_search([1.0, 0.0], 3)


def test_vectors_before_identity_are_refused(make_store: MakeStore) -> None:
    s = make_store()
    with pytest.raises(StoreError, match="set_identity"):
        s.upsert([chunk("a", vec=[1, 0, 0, 0])])
    assert s.count() == 0
    s.upsert([chunk("kw", "keyword only")])
    assert ids(s.keyword_search("keyword", 3)) == ["kw"]
    assert s.vector_search([1, 0, 0, 0], 3) == []


@pytest.mark.parametrize(
    "bad",
    [
        [math.nan, 0, 0, 0],
        [0, math.inf, 0, 0],
        [0, 0, -math.inf, 0],
        [1e39, 0, 0, 0],
    ],
)
def test_non_finite_vectors_are_rejected_and_nothing_is_written(
    store: SQLiteStore, bad: list[float]
) -> None:
    store.upsert([chunk("keep", "before", vec=[1, 0, 0, 0])])
    with pytest.raises(InvalidVector):
        store.upsert([chunk("new", "fresh", vec=[0, 1, 0, 0]), chunk("keep", "after", vec=bad)])
    assert store.count() == 1
    assert store.get(["keep"])[0].text == "before"
    assert store.keyword_search("fresh after", 5) == []
    with pytest.raises(InvalidVector):
        store.vector_search(bad, 3)


def test_empty_vector_is_rejected(store: SQLiteStore) -> None:
    with pytest.raises(InvalidVector, match="empty"):
        store.upsert([chunk("a", vec=[])])


def test_nan_metadata_is_refused_with_nothing_written(store: SQLiteStore) -> None:
    with pytest.raises(StoreError, match="NaN"):
        store.upsert([chunk("a"), chunk("b", score=math.nan)])
    assert store.count() == 0


def test_negative_k_is_an_error_and_zero_k_is_empty(store: SQLiteStore) -> None:
    store.upsert([chunk("a", "apple", vec=[1, 0, 0, 0])])
    assert store.vector_search([1, 0, 0, 0], 0) == []
    assert store.keyword_search("apple", 0) == []
    with pytest.raises(StoreError, match="k must"):
        store.vector_search([1, 0, 0, 0], -1)
    with pytest.raises(StoreError, match="k must"):
        store.keyword_search("apple", -1)


# -- persistence, migrations --------------------------------------------------------------------


def test_close_and_reopen_keeps_everything(make_store: MakeStore, db_path: Path) -> None:
    s = make_store()
    s.set_identity(IDENTITY)
    chunks = [chunk("a", "persistent apple", vec=[1, 0, 0, 0], k="v"), chunk("b", "banana")]
    s.upsert(chunks)
    s.put_document(Document(id="doc", hash="h"))
    s.close()
    assert db_path.is_file()
    again = make_store()
    assert again.get_identity() == IDENTITY
    assert again.get(["a", "b"]) == chunks
    assert ids(again.keyword_search("apple", 3)) == ["a"]
    assert ids(again.vector_search([1, 0, 0, 0], 3)) == ["a"]
    assert again.list_documents() == {"doc": Document(id="doc", hash="h")}


def test_migrations_run_once_and_reopen_is_idempotent(make_store: MakeStore) -> None:
    first = make_store()
    first.upsert([chunk("a", "apple")])
    version = first.connection.execute("PRAGMA user_version").fetchone()[0]
    first.close()
    for _ in range(3):
        s = make_store()
        assert s.connection.execute("PRAGMA user_version").fetchone()[0] == version == LATEST
        assert s.count() == 1
        s.close()


def test_a_newer_schema_is_refused(make_store: MakeStore) -> None:
    s = make_store()
    s.connection.execute("PRAGMA user_version = 99")
    s.close()
    with pytest.raises(StoreError, match="newer"):
        make_store()


def test_closed_store_says_so(make_store: MakeStore) -> None:
    s = make_store()
    s.close()
    s.close()
    with pytest.raises(StoreError, match="closed"):
        s.count()


def test_a_damaged_file_is_a_store_error_with_the_fix(
    tmp_path: Path, pm: pluggy.PluginManager
) -> None:
    path = tmp_path / "broken.sqlite"
    path.write_bytes(b"this is not a database" * 200)
    with pytest.raises(StoreError, match="engram rebuild"):
        SQLiteStore(SQLiteOptions(path=path), plugin_manager=pm)


def test_parent_folders_are_created(tmp_path: Path, pm: pluggy.PluginManager) -> None:
    path = tmp_path / "a" / "b" / "c" / "index.sqlite"
    with SQLiteStore(SQLiteOptions(path=path), plugin_manager=pm) as s:
        s.upsert([chunk("x")])
    assert path.is_file()


def test_memory_path_is_not_a_file(
    tmp_path: Path, pm: pluggy.PluginManager, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    for path in (":memory:", tmp_path / ":memory:"):
        with SQLiteStore(SQLiteOptions(path=path), plugin_manager=pm) as s:
            s.upsert([chunk("x")])
            assert s.count() == 1
    assert list(tmp_path.iterdir()) == []


# -- odd content ---------------------------------------------------------------------------------


ODD_IDS = [
    "with space",
    "quote'single",
    'quote"double',
    "semi;colon--",
    "x' OR '1'='1",
    "path/to/file.md#L10-L20",
    "ünïcødé",
    "東京",
    "emoji🙂",
    "rtl-שלום",
    "back\\slash",
    "new\nline",
    "nul\x00byte",
    "%_wild*",
]


def test_ids_with_odd_characters(store: SQLiteStore) -> None:
    chunks = [chunk(i, f"odd {n}", doc=i, vec=[1, n, 0, 0]) for n, i in enumerate(ODD_IDS)]
    store.upsert(chunks)
    assert store.get(list(reversed(ODD_IDS))) == list(reversed(chunks))
    store.delete(ODD_IDS[:7])
    assert [c.id for c in store.get(ODD_IDS)] == ODD_IDS[7:]
    store.delete_documents(ODD_IDS[7:])
    assert store.count() == 0


def test_empty_text_and_megabyte_text(store: SQLiteStore) -> None:
    big = ("lorem ipsum dolor sit amet " * 40_000)[:1_000_000] + " needle"
    store.upsert([chunk("empty", ""), chunk("big", big, vec=[1, 0, 0, 0])])
    assert store.get(["empty"])[0].text == ""
    assert store.get(["big"])[0].text == big
    assert ids(store.keyword_search("needle", 3)) == ["big"]
    store.upsert([chunk("big", "small now")])
    assert store.keyword_search("needle", 3) == []
    store.delete(["empty", "big"])
    assert store.count() == 0
    assert fts_terms(store) == []


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    texts=st.lists(st.text(max_size=60), min_size=1, max_size=6),
    metas=st.dictionaries(
        st.from_regex(r"[a-z_][a-z0-9_-]{0,6}", fullmatch=True),
        st.none() | st.booleans() | st.integers(-(2**63), 2**63 - 1) | st.text(max_size=10),
        max_size=3,
    ),
)
def test_arbitrary_text_and_metadata_round_trip(
    store: SQLiteStore, texts: list[str], metas: dict[str, Any]
) -> None:
    store.reset()
    chunks = [chunk(f"c{i}", t, **metas) for i, t in enumerate(texts)]
    store.upsert(chunks)
    assert store.get([c.id for c in chunks]) == chunks
    store.delete([c.id for c in chunks])
    assert store.count() == 0
    assert fts_terms(store) == []


def fts_terms(store: SQLiteStore) -> list[tuple[str, int]]:
    """Every term left in the FTS index: empty once all chunks are gone, if deletes are exact."""
    conn = store.connection
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab USING fts5vocab('main', 'chunks_fts', 'row')"
    )
    return conn.execute("SELECT term, doc FROM temp.vocab").fetchall()


def test_deletes_leave_nothing_behind_in_any_index(store: SQLiteStore) -> None:
    """Vectors, the side matrix and the FTS index follow every way a chunk can leave."""
    conn = store.connection

    def leftovers() -> tuple[int, int, int]:
        vectors = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        searched = len(store.vector_search([1.0, 1.0, 1.0, 1.0], 100))
        return vectors, searched, len(fts_terms(store))

    batch = [
        chunk(f"c{i}", f"word{i} shared", doc=f"d{i % 3}", vec=[i, 1, 0, 0], n=i) for i in range(9)
    ]
    store.upsert([*batch, chunk("z", "zero vector", vec=[0, 0, 0, 0])])
    assert leftovers()[:2] == (10, 10)  # the zero vector is found, with similarity 0
    store.delete(["c0", "z"])
    store.delete_documents(["d1"])
    store.delete_where(Eq(field="n", value=2))
    store.upsert([chunk("c3", "no vector now")])
    assert store.count() == 4
    assert leftovers()[:2] == (3, 3)
    store.delete([c.id for b in store.iter_chunks() for c in b])
    assert leftovers() == (0, 0, 0)


def selected(document: Document, sources: list[str], roots: list[str]) -> bool:
    """The record is of one of ``sources`` with its ``path`` one of ``roots`` or under one, as
    ``ReadsStamps.document_stamps`` chooses."""
    path, source = document.metadata.get("path"), document.metadata.get("source")
    if source not in sources or not isinstance(path, str):
        return False
    return any(path == root or path.startswith(root + "/") for root in roots)


def test_stamps_of_many_roots_need_no_bound_variable_a_root(store: SQLiteStore) -> None:
    """A collection indexes its files each as a root: thousands of roots stay one parameter,
    with the same stamps as the reference (``bulk_stamp`` over the records)."""
    mtime = 1_700_000_000_000_000_000
    for i in range(40):
        meta = {
            "source": "memory",
            "path": f"/c/{i}.md",
            "stat": [i, mtime, i, mtime],
            "indexed_at": mtime / 1e9 + 10,
        }
        store.put_document(Document(id=f"c/{i}.md", hash="h", metadata=meta))
    store.put_document(
        Document(id="c/10.mdx", hash="h", metadata={"source": "memory", "path": "/c/10.mdx"})
    )
    roots = [f"/c/{i}.md" for i in range(0, 40, 2)] + [f"/none/{i}" for i in range(20_000)]
    docs = store.list_documents()
    want = {i: bulk_stamp(d, 2.0) for i, d in docs.items() if selected(d, ["memory"], roots)}
    assert len(want) == 20 and want["c/0.md"] == (0, mtime, 0, mtime, "memory", "c/0.md")
    assert store.document_stamps(["memory", "vault"], roots, 2.0) == want
    assert store.document_stamps(["memory"], roots[:3], 2.0) == {
        i: want[i] for i in ("c/0.md", "c/2.md", "c/4.md")
    }
