"""The stamp cache (``stampcache.py``) never answers differently from the SQL it stands in for:
not after this store's writes, not after another store's, not after a plain SQLite client's
(an outside tool that knows nothing of the cache), not from a file left by an older state, a
torn file or another query's."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram import Document
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite.driver import select
from engram_sqlite.records import stamps_statement, to_stamps

MakeStore = Callable[..., SQLiteStore]
SOURCES = ["memory", "vault"]
ROOTS = ["/v", "/m"]
MTIME = 1_700_000_000_000_000_000


def record(i: int, size: int, source: str = "vault", root: str = "/v") -> Document:
    meta = {
        "source": source,
        "path": f"{root}/{i}.md",
        "stat": [size, MTIME, 1000 + i, MTIME],
        "indexed_at": MTIME / 1e9 + 10,
    }
    return Document(id=f"n/{i}.md", hash="h", metadata=meta)


def plain(db: Path) -> sqlite3.Connection:
    """A connection of the SQLite build the store runs on (another build may not see a WAL
    it shares), with none of the store's code: an outside tool."""
    module, _ = select("auto")
    conn: sqlite3.Connection = module.connect(db)
    return conn


def truth(db: Path, roots: list[str] = ROOTS) -> dict[str, Any]:
    """The stamps as the uncached query reads them, on a connection of its own."""
    query, params = stamps_statement(SOURCES, roots, 2.0)
    conn = plain(db)
    try:
        return to_stamps(conn.execute(query, params).fetchall())
    finally:
        conn.close()


def stamps_query_runs(store: SQLiteStore, call: Callable[[], object]) -> int:
    """How many times ``call`` runs the stamps SELECT on the store's connection."""
    seen: list[str] = []
    store.connection.set_trace_callback(seen.append)
    try:
        call()
    finally:
        store.connection.set_trace_callback(None)
    return sum("CASE WHEN hash != ''" in s for s in seen)


def test_a_reopened_store_answers_from_the_file_and_the_sql_read_is_skipped(
    make_store: MakeStore, db_path: Path
) -> None:
    first = make_store()
    for i in range(5):
        first.put_document(record(i, i))
    want = truth(db_path)
    assert first.document_stamps(SOURCES, ROOTS, 2.0) == want  # read from SQL, file written
    first.close()
    again = make_store()
    runs = stamps_query_runs(again, lambda: again.document_stamps(SOURCES, ROOTS, 2.0))
    assert runs == 0
    assert again.document_stamps(SOURCES, ROOTS, 2.0) == want
    # another query (other roots) is not answered from this one's cache
    assert again.document_stamps(SOURCES, ["/v"], 2.0) == truth(db_path, ["/v"])


def test_a_write_by_another_store_or_a_plain_client_is_never_hidden(
    make_store: MakeStore, db_path: Path
) -> None:
    mine, other = make_store(), make_store()
    for i in range(4):
        mine.put_document(record(i, i))
    assert mine.document_stamps(SOURCES, ROOTS, 2.0) == truth(db_path)
    other.delete_documents(["n/1.md"])  # e.g. `engram forget` in another process
    got = mine.document_stamps(SOURCES, ROOTS, 2.0)
    assert "n/1.md" not in got and got == truth(db_path)
    outside = plain(db_path)  # a tool that knows nothing of the cache
    with outside:
        outside.execute("UPDATE documents SET size = 99 WHERE id = 'n/2.md'")
    outside.close()
    got = mine.document_stamps(SOURCES, ROOTS, 2.0)
    assert got["n/2.md"][0] == 99 and got == truth(db_path)
    other.put_document(record(0, 50))  # and then this store writes before it reads again:
    mine.put_document(record(3, 60))  # its own write must not vouch for the other's
    got = mine.document_stamps(SOURCES, ROOTS, 2.0)
    assert got["n/0.md"][0] == 50 and got == truth(db_path)
    mine.close()  # its file now holds the current state; a third store reads it
    other.put_document(record(3, 42))
    third = make_store()
    assert third.document_stamps(SOURCES, ROOTS, 2.0) == truth(db_path)


def test_a_torn_or_foreign_cache_file_falls_back_to_sql(
    make_store: MakeStore, db_path: Path
) -> None:
    store = make_store()
    store.put_document(record(0, 7))
    assert store.document_stamps(SOURCES, ROOTS, 2.0) == truth(db_path)
    store.close()
    cache = db_path.with_name(db_path.name + "-stamps")
    data = cache.read_bytes()
    for damaged in (data[: len(data) // 2], data[:-1] + b"\x00", b"", b"not a cache at all"):
        cache.write_bytes(damaged)
        again = make_store()
        assert again.document_stamps(SOURCES, ROOTS, 2.0) == truth(db_path)
        again.close()


def test_reset_drops_what_the_cache_knew(make_store: MakeStore, db_path: Path) -> None:
    store = make_store()
    store.put_document(record(0, 7))
    assert store.document_stamps(SOURCES, ROOTS, 2.0) != {}
    make_store().reset()  # another process rebuilds the index from scratch
    assert store.document_stamps(SOURCES, ROOTS, 2.0) == {} == truth(db_path)
    store.reset()
    assert store.document_stamps(SOURCES, ROOTS, 2.0) == {}


# One step: (who, what, document, size, read after it?). who: 0 this store, 1 another store, 2 a
# plain client, 3 this store closed and opened again (it then starts from the file). Reading
# not after every step lets this store write on top of another's write it has not read.
steps = st.lists(
    st.tuples(
        st.integers(0, 3),
        st.sampled_from(["put", "delete", "relabel", "move", "replace"]),
        st.integers(0, 5),
        st.integers(0, 3),
        st.booleans(),
    ),
    min_size=1,
    max_size=25,
)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(steps=steps)
def test_after_any_writes_from_anyone_the_stamps_are_the_sql_answer(
    tmp_path_factory: Any, steps: list[tuple[int, str, int, int, bool]]
) -> None:
    db = tmp_path_factory.mktemp("stamps") / "index.sqlite"
    opened: list[SQLiteStore] = []

    def make() -> SQLiteStore:
        opened.append(SQLiteStore(SQLiteOptions(path=db)))
        return opened[-1]

    mine, other = make(), make()
    try:
        assert mine.document_stamps(SOURCES, ROOTS, 2.0) == {}
        for who, what, doc, size, read in steps:
            if who == 3:
                mine.close()
                mine = make()
                continue
            if who == 2:
                outside = plain(db)
                with outside:
                    outside.execute(_PLAIN[what], _plain_params(what, doc, size))
                outside.close()
            else:
                _write(mine if who == 0 else other, what, doc, size)
            if read:
                assert mine.document_stamps(SOURCES, ROOTS, 2.0) == truth(db)
        assert mine.document_stamps(SOURCES, ROOTS, 2.0) == truth(db)
    finally:
        for store in opened:
            store.close()


def _write(writer: SQLiteStore, what: str, doc: int, size: int) -> None:
    if what == "delete":
        writer.delete_documents([f"n/{doc}.md"])
    elif what == "relabel":
        writer.put_document(record(doc, size, source="memory"))
    elif what == "move":
        writer.put_document(record(doc, size, root="/elsewhere"))
    elif what == "replace":  # reads the token with the rest of meta
        writer.replace_document(record(doc, size), [])
    else:
        writer.put_document(record(doc, size))


_PLAIN = {
    "put": "UPDATE documents SET size = ? WHERE id = ?",
    "delete": "DELETE FROM documents WHERE id = ?",
    "relabel": "UPDATE documents SET source = 'memory', size = ? WHERE id = ?",
    "move": "UPDATE documents SET path = '/elsewhere/x.md', size = ? WHERE id = ?",
    "replace": "UPDATE documents SET size = ? WHERE id = ?",
}


def _plain_params(what: str, doc: int, size: int) -> tuple[object, ...]:
    return (f"n/{doc}.md",) if what == "delete" else (size, f"n/{doc}.md")
