"""Two stores on one file: writes are shared, readers never wait, writers wait for each other."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from engram import Chunk, IndexIdentity, StoreError
from engram_sqlite import SQLiteStore

IDENTITY = IndexIdentity(embedder="e", model="m", dimension=2, chunker="c")

MakeStore = Callable[..., SQLiteStore]


def chunk(cid: str, text: str = "shared words") -> Chunk:
    return Chunk(id=cid, document_id="d", text=text, vector=[1.0, 0.5])


def test_a_second_store_sees_the_first_stores_writes(make_store: MakeStore) -> None:
    writer, reader = make_store(), make_store()
    writer.set_identity(IDENTITY)
    assert reader.get_identity() == IDENTITY
    writer.upsert([chunk("a", "apple")])
    assert [h.chunk.id for h in reader.keyword_search("apple", 5)] == ["a"]
    assert [h.chunk.id for h in reader.vector_search([1.0, 0.5], 5)] == ["a"]
    reader.delete(["a"])
    assert writer.count() == 0


def test_readers_do_not_wait_for_an_open_write(make_store: MakeStore) -> None:
    writer, reader = make_store(), make_store(busy_timeout_ms=0)
    writer.set_identity(IDENTITY)
    writer.upsert([chunk("a")])
    conn = writer.connection
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("DELETE FROM chunks")
    try:
        assert reader.count() == 1
        assert [h.chunk.id for h in reader.keyword_search("shared", 5)] == ["a"]
        assert [h.chunk.id for h in reader.vector_search([1.0, 0.5], 5)] == ["a"]
    finally:
        conn.execute("COMMIT")
    assert reader.count() == 0


def test_a_writer_that_cannot_get_the_lock_gets_a_store_error(make_store: MakeStore) -> None:
    holder, other = make_store(), make_store(busy_timeout_ms=0)
    holder.connection.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(StoreError, match="busy_timeout_ms"):
            other.upsert([Chunk(id="x", document_id="d", text="t")])
    finally:
        holder.connection.execute("ROLLBACK")
    other.upsert([Chunk(id="x", document_id="d", text="t")])
    assert holder.count() == 1


def test_a_waiting_writer_proceeds_once_the_lock_is_released(make_store: MakeStore) -> None:
    holder, waiter = make_store(), make_store(busy_timeout_ms=60_000)
    holder.set_identity(IDENTITY)
    holder.connection.execute("BEGIN IMMEDIATE")
    started = threading.Event()
    errors: list[BaseException] = []

    def write() -> None:
        started.set()
        try:
            waiter.upsert([chunk(f"w{i}") for i in range(20)])
        except BaseException as exc:
            errors.append(exc)

    thread = threading.Thread(target=write)
    thread.start()
    started.wait()
    holder.connection.execute("COMMIT")
    thread.join()
    assert errors == []
    assert holder.count() == 20


def test_one_store_shared_by_threads(make_store: MakeStore) -> None:
    store = make_store()
    store.set_identity(IDENTITY)

    def work(n: int) -> None:
        for i in range(10):
            store.upsert([chunk(f"t{n}-{i}", f"thread {n} item {i}")])
            store.keyword_search("thread", 3)
            store.vector_search([1.0, 0.5], 3)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert store.count() == 40


def test_what_a_search_starts_from_is_read_again_after_any_write(make_store: MakeStore) -> None:
    """The identity and vector state are kept between searches (``search_rows.SearchMeta``),
    yet every commit, by this store or another on the file, is seen by the next search."""
    writer, reader = make_store(), make_store()
    assert reader.get_identity() is None  # kept: nothing recorded yet
    assert reader.vector_search([1.0, 0.5], 5) == []
    writer.set_identity(IDENTITY)  # another connection's commit
    assert reader.get_identity() == IDENTITY
    writer.upsert([chunk("a", "apple")])
    assert [h.chunk.id for h in reader.vector_search([1.0, 0.5], 5)] == ["a"]
    reader.upsert([chunk("b", "banana")])  # this connection's own write
    assert sorted(h.chunk.id for h in reader.vector_search([1.0, 0.5], 5)) == ["a", "b"]
    reader.delete(["a"])
    assert [h.chunk.id for h in reader.vector_search([1.0, 0.5], 5)] == ["b"]
    assert [h.chunk.id for h in writer.vector_search([1.0, 0.5], 5)] == ["b"]


def test_searches_without_writes_between_them_read_the_meta_rows_once(
    make_store: MakeStore,
) -> None:
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert([chunk("a", "apple")])
    statements: list[str] = []
    store.connection.set_trace_callback(statements.append)
    try:
        for _ in range(3):
            assert [h.chunk.id for h in store.vector_search([1.0, 0.5], 5)] == ["a"]
            assert store.get_identity() == IDENTITY
        quiet = len(statements)
        store.upsert([chunk("b", "banana")])
        written = len(statements)
        assert len(store.vector_search([1.0, 0.5], 5)) == 2
    finally:
        store.connection.set_trace_callback(None)

    def meta_reads(trace: list[str]) -> int:
        return sum("FROM meta WHERE key IN" in s for s in trace)

    assert sum(s == "PRAGMA data_version" for s in statements[:quiet]) == 6  # one a call
    assert meta_reads(statements[:quiet]) == 1  # the first search's
    assert meta_reads(statements[written:]) == 1  # the search after the write reads again
