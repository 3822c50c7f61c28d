"""What the Postgres store adds to the conformance suite: namespaces kept apart (any text is a
namespace, used as data), the identity guard kept in the database, migrations under an advisory
lock, and HNSW past the threshold (used, with recall measured against exact search, and
filtered searches that still return k hits)."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
import psycopg
import pytest

from engram import (
    Chunk,
    Contains,
    DimensionMismatch,
    Document,
    Eq,
    IdentityMismatch,
    In,
    IndexIdentity,
)
from engram.testing.data import IDENTITY, chunk, unit_vector
from engram_postgres import PostgresOptions
from engram_postgres.schema import LATEST, lock_key
from engram_postgres.store import PostgresStore
from engram_postgres.testing import fresh_namespace

WAIT = 60.0


@pytest.fixture
def open_store(postgres_options: PostgresOptions) -> Iterator[Callable[..., PostgresStore]]:
    """Build stores (closed at the end), by default on the test's own namespace."""
    opened: list[PostgresStore] = []

    def build(**changes: Any) -> PostgresStore:
        store = PostgresStore(postgres_options.model_copy(update=changes))
        opened.append(store)
        return store

    yield build
    for store in opened:
        store.close()


def wait_for(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.05)


def test_namespaces_do_not_see_each_other(open_store: Callable[..., PostgresStore]) -> None:
    a = open_store(namespace=fresh_namespace("a"))
    b = open_store(namespace=fresh_namespace("b"))
    a.set_identity(IDENTITY)
    a.upsert([chunk(i) for i in range(5)])
    a.put_document(Document(id="doc-1", hash="h"))
    assert b.get_identity() is None and b.count() == 0 and b.list_documents() == {}
    b.set_identity(IDENTITY.model_copy(update={"dimension": 16, "embedder": "other"}))
    b.upsert([chunk(1).model_copy(update={"vector": unit_vector(1, 16), "text": "only in b"})])
    assert b.keyword_search("only", 5)[0].chunk.text == "only in b"
    assert a.keyword_search("only", 5) == []
    b.reset()
    assert a.count() == 5 and a.get_identity() == IDENTITY and set(a.list_documents()) == {"doc-1"}


@pytest.mark.parametrize(
    "namespace",
    [
        "x'; DROP TABLE engram.namespaces; --",
        'quote"double',
        "back\\slash/../path",
        "ünï 🦙 space",
        "%s %(name)s {}",
    ],
)
def test_a_namespace_with_sql_or_path_characters_is_only_data(
    open_store: Callable[..., PostgresStore], namespace: str
) -> None:
    store = open_store(namespace=namespace)
    store.set_identity(IDENTITY)
    store.upsert([chunk(1), chunk(2)])
    again = open_store(namespace=namespace)
    assert again.count() == 2 and again.get_identity() == IDENTITY
    other = open_store(namespace=namespace + "-other")
    assert other.count() == 0
    assert namespace in store.diagnostics()["namespace"]


def test_another_embedder_on_the_same_namespace_is_refused(
    open_store: Callable[..., PostgresStore],
) -> None:
    first = open_store()
    first.set_identity(IDENTITY)
    first.upsert([chunk(1)])
    second = open_store()  # another client, same namespace
    other = IndexIdentity(
        embedder="openai", model="text-embedding-3-small", dimension=8, chunker="none"
    )
    with pytest.raises(IdentityMismatch) as err:
        second.set_identity(other)
    assert "suite/random-unit" in str(err.value) and "openai" in str(err.value)
    assert "engram rebuild" in str(err.value)
    with pytest.raises(DimensionMismatch):
        second.set_identity(IDENTITY.model_copy(update={"dimension": 9}))
    assert first.get_identity() == IDENTITY and first.count() == 1


def test_two_clients_write_and_read_the_same_namespace(
    open_store: Callable[..., PostgresStore],
) -> None:
    one, two = open_store(), open_store()
    one.set_identity(IDENTITY)
    two.upsert([chunk(i) for i in range(10)])  # the identity is read from the database
    assert one.count() == 10
    assert [h.chunk.id for h in one.vector_search(unit_vector(3), 1)] == ["chunk-3"]


def _count_waiters(dsn: str, key: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' AND NOT l.granted "
            "AND ((l.classid::bigint << 32) | l.objid::bigint) = "
            "(hashtextextended(%s, 0) & x'ffffffffffffffff'::bigint)",
            (key,),
        ).fetchone()
        return int(row[0]) if row else 0


def test_a_client_waits_while_another_migrates(postgres_dsn: str) -> None:
    schema = "lock_" + fresh_namespace("s").replace("-", "_")
    options = PostgresOptions.model_validate({"schema": schema, "namespace": "n"})
    opened: list[PostgresStore] = []
    errors: list[BaseException] = []
    with psycopg.connect(postgres_dsn, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(hashtextextended(%s, 0))", (lock_key(schema),))

        def open_one() -> None:
            try:
                opened.append(PostgresStore(options))
            except BaseException as exc:  # pragma: no cover - reported below
                errors.append(exc)

        thread = threading.Thread(target=open_one)
        thread.start()
        wait_for(lambda: _count_waiters(postgres_dsn, lock_key(schema)) == 1, "the waiter")
        assert not opened and thread.is_alive(), "the second client did not wait for the lock"
        holder.execute("SELECT pg_advisory_unlock(hashtextextended(%s, 0))", (lock_key(schema),))
        thread.join(WAIT)
    assert not errors and len(opened) == 1
    try:
        opened[0].set_identity(IDENTITY)
        opened[0].upsert([chunk(1)])
        assert opened[0].count() == 1
    finally:
        opened[0].close()


MIGRATE_CHILD = """
import sys
from engram_postgres.store import PostgresStore
from engram_postgres import PostgresOptions
options = {"schema": sys.argv[1], "namespace": sys.argv[2]}
store = PostgresStore(PostgresOptions.model_validate(options))
store.close()
print("ok")
"""


def test_two_processes_migrating_a_new_schema_at_once_both_succeed(postgres_dsn: str) -> None:
    schema = "race_" + fresh_namespace("s").replace("-", "_")
    children = [
        subprocess.Popen(
            [sys.executable, "-c", MIGRATE_CHILD, schema, "shared"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(3)
    ]
    outputs = [c.communicate(timeout=120) for c in children]
    assert [c.returncode for c in children] == [0, 0, 0], outputs
    with psycopg.connect(postgres_dsn, autocommit=True) as conn:
        versions = conn.execute(
            psycopg.sql.SQL("SELECT version FROM {}.migrations ORDER BY version").format(
                psycopg.sql.Identifier(schema)
            )
        ).fetchall()
        namespaces = conn.execute(
            psycopg.sql.SQL("SELECT name FROM {}.namespaces").format(psycopg.sql.Identifier(schema))
        ).fetchall()
    assert [v[0] for v in versions] == list(range(1, LATEST + 1))
    assert namespaces == [("shared",)]


DIM = 32


def random_chunks(n: int, seed: int = 7) -> tuple[list[Chunk], np.ndarray[Any, Any]]:
    rng = np.random.default_rng(seed)
    matrix = rng.normal(size=(n, DIM)).astype(np.float32)
    chunks = [
        Chunk(
            id=f"r{i}",
            document_id=f"d{i % 50}",
            text=f"row {i}",
            vector=matrix[i].tolist(),
            metadata={"bucket": i % 20},
        )
        for i in range(n)
    ]
    return chunks, matrix


def exact_top(
    matrix: np.ndarray[Any, Any],
    query: np.ndarray[Any, Any],
    k: int,
    rows: np.ndarray[Any, Any] | None = None,
) -> list[str]:
    units = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    scores = units @ (query / np.linalg.norm(query))
    order = np.argsort(-scores, kind="stable")
    if rows is not None:
        order = np.array([i for i in order if rows[i]])
    return [f"r{i}" for i in order[:k]]


def hnsw_scans(store: PostgresStore) -> int:
    with psycopg.connect(store._db.dsn.conninfo, autocommit=True) as conn:
        row = conn.execute(
            "SELECT coalesce(sum(idx_scan), 0) FROM pg_stat_user_indexes "
            "WHERE schemaname = %s AND indexrelname = %s",
            (store.options.pg_schema, store.tables.hnsw_name),
        ).fetchone()
        return int(row[0]) if row else 0


def test_hnsw_is_built_past_the_threshold_used_and_recalls_the_exact_top_10(
    open_store: Callable[..., PostgresStore],
) -> None:
    store = open_store(hnsw_threshold=1500, ef_search=100)
    store.set_identity(IndexIdentity(embedder="r", model="r", dimension=DIM, chunker="none"))
    chunks, matrix = random_chunks(3000)
    store.upsert(chunks[:1500])
    assert store.diagnostics()["hnsw_index"] is False, "built at the threshold, not past it"
    exact_before = store.vector_search(matrix[0].tolist(), 10)
    assert [h.chunk.id for h in exact_before] == exact_top(matrix[:1500], matrix[0], 10)
    store.upsert(chunks[1500:])
    assert store.diagnostics()["hnsw_index"] is True
    store.optimize()  # ANALYZE: the planner then knows the table is large
    plan = store.vector_plan(matrix[1].tolist(), 10)
    assert f"Index Scan using {store.tables.hnsw_name}" in plan, plan
    before = hnsw_scans(store)
    rng = np.random.default_rng(99)
    recalls = []
    for _ in range(40):
        query = rng.normal(size=DIM).astype(np.float32)
        got = [h.chunk.id for h in store.vector_search(query.tolist(), 10)]
        want = exact_top(matrix, query, 10)
        recalls.append(len(set(got) & set(want)) / 10)
    wait_for(lambda: hnsw_scans(store) > before, "the HNSW index's scan counter")
    recall = float(np.mean(recalls))
    print(f"HNSW recall@10 over 3000 x {DIM} random vectors, ef_search 100: {recall:.3f}")
    assert recall >= 0.95


def test_a_filtered_hnsw_search_still_returns_k_hits(
    open_store: Callable[..., PostgresStore],
) -> None:
    store = open_store(hnsw_threshold=100, ef_search=10)
    store.set_identity(IndexIdentity(embedder="r", model="r", dimension=DIM, chunker="none"))
    chunks, matrix = random_chunks(3000, seed=3)
    store.upsert(chunks)
    store.optimize()
    assert store.diagnostics()["hnsw_index"] is True
    rng = np.random.default_rng(5)
    buckets = np.array([c.metadata["bucket"] == 7 for c in chunks])  # 1 row in 20
    plan = store.vector_plan(matrix[1].tolist(), 10, Eq(field="bucket", value=7))
    assert f"Index Scan using {store.tables.hnsw_name}" in plan, plan
    for _ in range(10):
        query = rng.normal(size=DIM).astype(np.float32)
        hits = store.vector_search(query.tolist(), 10, Eq(field="bucket", value=7))
        assert len(hits) == 10
        assert all(h.chunk.metadata["bucket"] == 7 for h in hits)
        scores = [h.score for h in hits]
        assert scores == sorted(scores, reverse=True)
        want = exact_top(matrix, query, 10, buckets)
        assert len({h.chunk.id for h in hits} & set(want)) >= 8


def test_nul_and_the_escape_character_round_trip_everywhere(
    open_store: Callable[..., PostgresStore],
) -> None:
    """PostgreSQL text cannot hold U+0000: ids, texts and metadata holding it (and U+0001, the
    escape) come back as given, and filters and deletes find them."""
    store = open_store()
    store.set_identity(IDENTITY)
    odd = ["a\x00b", "\x01", "\x010", "\x00\x01\x00", "plain"]
    chunks = [
        chunk(i).model_copy(
            update={
                "id": text,
                "document_id": "doc" + text,
                "text": f"word{i} {text} end",
                "metadata": {"k" + text: text, "list": [text, 1]},
            }
        )
        for i, text in enumerate(odd)
    ]
    store.upsert(chunks)
    store.put_document(Document(id="doc\x00", hash="h\x00", metadata={"m": "\x00\x01"}))
    assert store.get(odd) == [
        c.model_copy(update={"vector": store.get([c.id])[0].vector}) for c in chunks
    ]
    assert store.list_documents()["doc\x00"].metadata == {"m": "\x00\x01"}
    for c in chunks:
        key = next(iter(c.metadata))
        found = store.vector_search(unit_vector(1), 10, Eq(field="list", value=c.id))
        assert found == [] or key  # a list value is never equal to a scalar
        assert store.count(In(field="list", values=[])) == 0
    hits = store.vector_search(unit_vector(1), 10, Contains(field="list", value="a\x00b"))
    assert [h.chunk.id for h in hits] == ["a\x00b"]
    store.delete(["\x010"])
    store.delete_documents(["doc\x00\x01\x00"])
    store.prune_document("doc\x01", keep=[])
    assert sorted(c.id for b in store.iter_chunks() for c in b) == ["a\x00b", "plain"]


WRITER = """
import sys
from engram.models import Document
from engram.testing.data import IDENTITY, chunk
from engram_postgres.store import PostgresStore
from engram_postgres import PostgresOptions

namespace, me = sys.argv[1], int(sys.argv[2])
store = PostgresStore(PostgresOptions(namespace=namespace))
store.set_identity(IDENTITY)
for round in range(40):
    # Overlapping ids in opposite orders: rows are locked sorted, so no deadlock.
    ids = range(30) if me % 2 else reversed(range(30))
    batch = [chunk(i, text=f"round {round} writer {me}") for i in ids]
    store.upsert(batch)
    store.replace_document(Document(id=f"doc-{me}", hash=str(round)),
                           [chunk(100 + me, document_id=f"doc-{me}")])
    store.delete([f"chunk-{round % 30}"])
store.close()
print("ok")
"""


def test_processes_writing_the_same_chunks_at_once_neither_fail_nor_duplicate(
    open_store: Callable[..., PostgresStore], postgres_options: PostgresOptions
) -> None:
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, postgres_options.namespace, str(me)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for me in range(4)
    ]
    outputs = [w.communicate(timeout=600) for w in writers]
    assert [w.returncode for w in writers] == [0, 0, 0, 0], outputs
    store = open_store()
    every = [c.id for b in store.iter_chunks() for c in b]
    assert len(every) == len(set(every)) == store.count()
    assert {f"chunk-{100 + me}" for me in range(4)} <= set(every)
    assert set(store.list_documents()) == {f"doc-{me}" for me in range(4)}
    assert all(d.hash == "39" for d in store.list_documents().values())


def test_staged_writes_on_one_pooled_connection_leave_nothing_behind(
    open_store: Callable[..., PostgresStore],
) -> None:
    """Chunks are written through a session-private staging table (one COPY, one INSERT ...
    SELECT): with a single pooled connection every write reuses it, and a chunk deleted between
    two writes is never written again by the second, nor is any row of an earlier batch."""
    store = open_store(pool_min=1, pool_max=1)
    store.set_identity(IDENTITY)
    store.upsert([chunk(i) for i in range(5)])
    store.delete([chunk(0).id])
    store.replace_document(
        Document(id="doc-x", hash="1"),
        [chunk(10, document_id="doc-x"), chunk(11, document_id="doc-x")],
    )
    store.upsert([chunk(20, text="later")])
    ids = sorted(c.id for b in store.iter_chunks() for c in b)
    assert ids == sorted(chunk(i).id for i in (1, 2, 3, 4, 10, 11, 20))
    assert store.get([chunk(20).id])[0].text == "later"
    assert store.get([chunk(3).id])[0].vector == pytest.approx(chunk(3).vector)
    # A chunk without a vector goes through the binary COPY as NULL and comes back as None.
    store.upsert([chunk(30).model_copy(update={"vector": None})])
    assert store.get([chunk(30).id])[0].vector is None
    assert store.count() == 8


def test_vectors_are_kept_in_the_row_not_moved_out_to_toast(
    open_store: Callable[..., PostgresStore], postgres_dsn: str
) -> None:
    """A chunk row (text, tsvector, vector) passes PostgreSQL's 2 kB TOAST threshold; with
    pgvector's default EXTERNAL storage the vector moves out of line and exact scans read the
    TOAST table too. The column is set to MAIN when the identity types it."""
    store = open_store()
    with psycopg.connect(postgres_dsn) as conn:
        table = store.tables.chunks.as_string(conn)
    query = (
        "SELECT attstorage FROM pg_attribute WHERE attrelid = %s::regclass "
        "AND attname = 'embedding'"
    )
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute(query, (table,)).fetchone() == ("e",)  # pgvector's default
    store.set_identity(IDENTITY)
    text = " ".join(f"word{i}" for i in range(300))  # a chunk-sized text: the row passes 2 kB
    store.upsert([chunk(i, text=text) for i in range(20)])
    with psycopg.connect(postgres_dsn) as conn:
        assert conn.execute(query, (table,)).fetchone() == ("m",)
    assert store.get([chunk(7).id])[0].vector == pytest.approx(chunk(7).vector)
    assert [h.chunk.id for h in store.vector_search(chunk(7).vector or [], 1)] == [chunk(7).id]
