"""The side matrix never answers from stale or missing vectors: whatever state the file beside the
index is in (old, damaged, another store's, absent, a crash in the middle of a write), a vector
search equals exact cosine over the vectors SQLite holds at that moment."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram import Chunk, Document, IndexIdentity
from engram.testing.host import get_plugin_manager
from engram_sqlite import SQLiteOptions, SQLiteStore
from engram_sqlite.driver import load_vec, select
from engram_sqlite.fts import index_text
from engram_sqlite.matrix import APPEND_AT, COMPACT_SHARE, Snapshot, _merged
from engram_sqlite.migrations import MIGRATIONS
from engram_sqlite.sidefile import (
    HEADER_BYTES,
    MAGIC,
    Header,
    HeaderCache,
    append,
    load,
    pack,
    read_header,
    rewrite,
)

DIM = 8
IDENTITY = IndexIdentity(embedder="rand", model="r8", dimension=DIM, chunker="c")
MakeStore = Callable[..., SQLiteStore]


def side_file(db_path: Path) -> Path:
    return db_path.with_name(db_path.name + "-vectors")


def chunks(start: int, stop: int, seed: int) -> list[Chunk]:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(stop - start, DIM)).tolist()
    return [
        Chunk(id=f"c{i}", document_id=f"d{i % 7}", text=f"text {i}", vector=vectors[i - start])
        for i in range(start, stop)
    ]


def truth(store: SQLiteStore, query: list[float], k: int) -> list[tuple[str, float]]:
    """Exact top-k over what SQLite holds, read with plain SQL. (Through the store's own driver:
    two SQLite libraries on one file in one process break each other's POSIX locks.)"""
    rows = store.connection.execute(
        "SELECT c.id, v.vector, c.rowid FROM chunks c JOIN vectors v ON v.rowid = c.rowid"
    ).fetchall()
    if not rows:
        return []
    x = np.asarray([np.frombuffer(r[1], dtype="<f4") for r in rows], dtype=np.float64)
    q = np.asarray(query, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1) * np.linalg.norm(q)
    sims = np.divide(x @ q, norms, out=np.zeros(len(rows)), where=norms > 0)
    order = sorted(range(len(rows)), key=lambda i: (-sims[i], rows[i][2]))[:k]
    return [(rows[i][0], float(sims[i])) for i in order]


def assert_exact(store: SQLiteStore, seed: int, k: int = 10) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(5):
        query = rng.normal(size=DIM).tolist()
        got = [(h.chunk.id, h.score) for h in store.vector_search(query, k)]
        want = truth(store, query, k)
        assert [g[0] for g in got] == [w[0] for w in want]
        assert np.allclose([g[1] for g in got], [w[1] for w in want], atol=1e-5)


def test_the_writer_writes_the_side_file_and_a_new_store_maps_it(
    make_store: MakeStore, db_path: Path
) -> None:
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 300, seed=1))
    assert side_file(db_path).read_bytes().startswith(MAGIC)  # written by the writer, not a query
    assert_exact(store, seed=2)
    again = make_store()
    assert_exact(again, seed=3)
    view = again._matrix._view
    assert view is not None
    matrix = view.snapshot.matrix
    assert not matrix.flags.owndata and not matrix.flags.writeable  # the file's read-only map


def test_an_old_side_file_is_caught_up_not_trusted(make_store: MakeStore, db_path: Path) -> None:
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 400, seed=1))
    assert_exact(store, seed=2)
    old = db_path.with_name("old-vectors")
    shutil.copy(side_file(db_path), old)
    store.upsert(chunks(390, 420, seed=5))  # 10 changed vectors, 20 new ones
    store.delete([f"c{i}" for i in range(0, 40)])
    store.upsert([Chunk(id="c50", document_id="d", text="no vector any more")])
    store.optimize()  # a newer file and fewer tombstones
    shutil.copy(old, side_file(db_path))  # put the stale file back, as a restore might
    reopened = make_store()
    assert_exact(reopened, seed=6)
    hits = {h.chunk.id for h in reopened.vector_search([1.0] * DIM, 1000)}
    assert "c0" not in hits and "c50" not in hits and "c419" in hits
    assert len(hits) == reopened.count() - 1  # every chunk with a vector, nothing else


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: p.write_bytes(b""),
        lambda p: p.write_bytes(os.urandom(HEADER_BYTES + 100)),
        lambda p: p.write_bytes(p.read_bytes()[:-7]),
        lambda p: p.write_bytes(p.read_bytes().replace(b'"format": 2', b'"format": 9')),
        lambda p: p.unlink(),
    ],
    ids=["empty", "garbage", "truncated", "future-format", "missing"],
)
def test_a_damaged_or_missing_side_file_is_rebuilt(
    make_store: MakeStore, db_path: Path, damage: Callable[[Path], object]
) -> None:
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 200, seed=1))
    assert_exact(store, seed=2)
    damage(side_file(db_path))
    reopened = make_store()
    assert_exact(reopened, seed=3)
    assert side_file(db_path).read_bytes().startswith(MAGIC)


def test_another_stores_side_file_is_never_used(make_store: MakeStore, tmp_path: Path) -> None:
    a_path, b_path = tmp_path / "a.sqlite", tmp_path / "b.sqlite"
    a, b = make_store(path=a_path), make_store(path=b_path)
    for store, seed in ((a, 1), (b, 2)):  # same ids, same generations, other vectors
        store.set_identity(IDENTITY)
        store.upsert(chunks(0, 100, seed=seed))
        store.vector_search([1.0] * DIM, 1)
    shutil.copy(side_file(a_path), side_file(b_path))
    assert_exact(make_store(path=b_path), seed=4)


def test_a_second_writer_is_seen_at_once(make_store: MakeStore, db_path: Path) -> None:
    reader, writer = make_store(), make_store()
    reader.set_identity(IDENTITY)
    reader.upsert(chunks(0, 100, seed=1))
    assert_exact(reader, seed=2)
    writer.upsert(chunks(50, 5_000, seed=3))  # enough to make the reader rebuild
    assert_exact(reader, seed=4)
    writer.delete([f"c{i}" for i in range(0, 5_000, 2)])
    assert_exact(reader, seed=5)
    writer.optimize()  # forgets the tombstones the reader's snapshot still needs
    writer.delete(["c1"])
    assert_exact(reader, seed=6)
    writer.reset()
    writer.set_identity(IDENTITY)
    writer.upsert(chunks(0, 30, seed=7))  # a new store: same ids, other vectors
    assert_exact(reader, seed=8)


def test_a_store_from_before_the_side_matrix_is_migrated(
    make_store: MakeStore, db_path: Path
) -> None:
    """A schema-1 file (vec0 table, FTS triggers) opens, keeps its chunks and searches exactly."""
    module, _ = select("auto")  # the driver the store will use: one SQLite library per file
    db_path.parent.mkdir(parents=True, exist_ok=True)
    conn = module.connect(db_path, isolation_level=None)

    load_vec(conn)
    conn.create_function("engram_fts_text", 1, index_text, deterministic=True)
    conn.executescript(MIGRATIONS[0])
    conn.execute("INSERT INTO meta VALUES ('identity', ?)", (IDENTITY.model_dump_json(),))
    conn.execute(f"CREATE VIRTUAL TABLE chunk_vectors USING vec0(embedding float[{DIM}])")
    for i, c in enumerate(chunks(0, 50, seed=1), start=1):
        conn.execute(
            "INSERT INTO chunks(id, document_id, vector_state, text) VALUES (?, ?, 1, ?)",
            (c.id, c.document_id, c.text),
        )
        blob = np.asarray(c.vector, dtype="<f4").tobytes()
        conn.execute("INSERT INTO vectors VALUES (?, ?)", (i, blob))
        conn.execute("INSERT INTO chunk_vectors(rowid, embedding) VALUES (?, ?)", (i, blob))
    conn.execute("PRAGMA user_version = 1")
    conn.close()
    store = make_store()
    assert store.count() == 50
    assert_exact(store, seed=2)
    assert [h.chunk.id for h in store.keyword_search("text 7", 1)] == ["c7"]
    store.upsert([Chunk(id="c7", document_id="d", text="rewritten words", vector=[1.0] * DIM)])
    assert store.keyword_search("rewritten", 5)[0].chunk.id == "c7"
    assert [h.chunk.id for h in store.keyword_search("text 7", 50)].count("c7") == 0
    assert_exact(store, seed=3)


_WORKER = textwrap.dedent(
    """
    import sys
    import numpy as np
    from engram.models import Chunk, Document, IndexIdentity
    from engram_sqlite import SQLiteOptions, SQLiteStore
    from engram.testing.host import get_plugin_manager

    path, dim = sys.argv[1], int(sys.argv[2])
    store = SQLiteStore(SQLiteOptions(path=path), plugin_manager=get_plugin_manager())
    store.set_identity(IndexIdentity(embedder="rand", model="r8", dimension=dim, chunker="c"))
    rng = np.random.default_rng(int(sys.argv[3]))
    n = 0
    print("ready", flush=True)
    while True:
        vectors = rng.normal(size=(300, dim)).tolist()
        store.upsert([
            Chunk(id=f"c{rng.integers(0, 5000)}", document_id="d", text=f"t {n}", vector=v)
            for v in vectors
        ])
        store.delete([f"c{i}" for i in rng.integers(0, 5000, size=40)])
        store.vector_search(rng.normal(size=dim).tolist(), 10)  # keeps rewriting the side file
        n += 1
        if n % 7 == 0:
            store.optimize()
        print("batch", n, flush=True)
    """
)


def test_kill_9_during_ingest_never_leaves_a_stale_answer(tmp_path: Path) -> None:
    """A writer killed at random points (mid-transaction, mid side-file write): every reopen
    answers exactly what SQLite holds, and the writer's next run carries on."""
    db_path = tmp_path / "crash.sqlite"
    rng = np.random.default_rng(11)
    for round_ in range(4):
        proc = subprocess.Popen(
            [sys.executable, "-c", _WORKER, str(db_path), str(DIM), str(round_)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        for _ in range(int(rng.integers(1, 8))):  # let some batches land, then kill mid-next
            assert proc.stdout.readline().startswith("batch"), proc.stderr
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL, proc.stderr.read() if proc.stderr else ""
        store = SQLiteStore(SQLiteOptions(path=db_path), plugin_manager=get_plugin_manager())
        try:
            assert store.count() > 0
            assert_exact(store, seed=round_, k=25)
            every = {h.chunk.id for h in store.vector_search([1.0] * DIM, 10_000)}
            assert every == {c.id for batch in store.iter_chunks() for c in batch}
        finally:
            store.close()


def test_a_reader_behind_the_file_never_writes_it_back(
    make_store: MakeStore, db_path: Path
) -> None:
    """A search whose transaction began before a writer appended (file newer than what it may
    see) answers from its own generation and leaves the writer's newer file in place."""
    writer, reader = make_store(), make_store()
    writer.set_identity(IDENTITY)
    writer.upsert(chunks(0, 200, seed=1))
    with reader._db.read() as conn:  # the search's read transaction, opened before the write
        seen = conn.execute("SELECT count(*) FROM vectors").fetchone()[0]
        writer.upsert(chunks(200, 260, seed=2))
        written = side_file(db_path).read_bytes()
        view = reader._matrix.view(conn, DIM)
        assert len(view.snapshot) + len(view.delta_rowids) == seen == 200
    assert side_file(db_path).read_bytes() == written
    assert_exact(reader, seed=3)


def test_the_writer_compacts_the_file_once_replaced_records_cost_searches(
    make_store: MakeStore, db_path: Path
) -> None:
    """Replaced records are appended (cheap for the writer) until more than 1/COMPACT_SHARE of
    the file is dead; then the writer rewrites it with live rows only, so searches never scan
    many dead rows. Fewer than APPEND_AT changed rows wait for the next append (or the close),
    read from SQLite meanwhile. Every search in between stays exact."""
    assert APPEND_AT < 100 and 100 * COMPACT_SHARE < 4_100 < 196 * COMPACT_SHARE
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 4_000, seed=1))
    store.upsert(chunks(0, 100, seed=2))  # 100 replaced: 100 * 32 < 4,100 records
    assert (_header(db_path).count, _header(db_path).dead) == (4_100, 100)
    generation = _header(db_path).generation
    store.upsert(chunks(200, 200 + APPEND_AT // 2, seed=3))  # too few rows to append
    assert _header(db_path).generation == generation
    assert_exact(store, seed=3)
    assert_exact(make_store(), seed=4)  # another process reads the few rows from SQLite
    store.upsert(chunks(300, 300 + APPEND_AT, seed=4))  # 100 + 96 replaced: 196 * 32 > 4,196
    assert (_header(db_path).count, _header(db_path).dead) == (4_000, 0)
    assert_exact(store, seed=5)
    store.delete([f"c{i}" for i in range(500, 700)])  # removals count as dead too
    assert (_header(db_path).count, _header(db_path).dead) == (3_800, 0)
    assert_exact(make_store(), seed=6)


def test_a_closing_writer_appends_what_it_held_back(make_store: MakeStore, db_path: Path) -> None:
    """A write of fewer than APPEND_AT rows leaves the file behind while the store is open;
    closing appends them, so the next process maps a current file."""
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 500, seed=1))
    store.upsert(chunks(0, 3, seed=2))
    store.delete(["c10"])
    behind = _header(db_path)
    assert behind.count == 500
    store.close()
    header = _header(db_path)
    assert header.generation > behind.generation and header.count == 504
    reopened = make_store()
    assert_exact(reopened, seed=3)
    view = reopened._matrix._view
    assert view is not None and len(view.delta_rowids) == 0  # nothing read from SQLite


def test_a_replaced_document_appends_as_any_write_does(
    make_store: MakeStore, db_path: Path
) -> None:
    """``replace_document`` asks whether to append inside its transaction: a one-chunk edit
    leaves the file behind (searches stay exact), APPEND_AT changed rows append at once, and
    closing appends what was held back."""
    store = make_store()
    store.set_identity(IDENTITY)
    store.upsert(chunks(0, 500, seed=1))
    start = _header(db_path)
    one = [c.model_copy(update={"document_id": "solo"}) for c in chunks(500, 501, seed=2)]
    store.replace_document(Document(id="solo", hash="h"), one)
    assert _header(db_path).generation == start.generation
    assert_exact(store, seed=3)
    many = [c.model_copy(update={"document_id": "big"}) for c in chunks(600, 600 + APPEND_AT, 4)]
    store.replace_document(Document(id="big", hash="h"), many)
    appended = _header(db_path)
    assert appended.generation > start.generation and appended.count == 501 + APPEND_AT
    store.replace_document(Document(id="big", hash="h2"), many[:-1])
    assert _header(db_path).generation == appended.generation
    store.close()
    assert _header(db_path).generation > appended.generation
    assert_exact(make_store(), seed=5)


def _header(db_path: Path) -> Header:
    with side_file(db_path).open("rb") as fh:
        header = read_header(fh)
    assert header is not None
    return header


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 40), min_size=0, max_size=60),
    st.sets(st.integers(1, 50), max_size=20),
    st.sets(st.integers(1, 50), max_size=10),
)
def test_merging_changes_into_a_snapshot_keeps_exactly_the_live_rows(
    written: list[int], changed: set[int], removed: set[int]
) -> None:
    """Records written in any order (rowids replaced, some removed) with later changes merged
    in: every live row once, rowids ascending, each with its latest vector."""
    dim = 3
    rng = np.random.default_rng(len(written))
    records = [(r if rng.random() > 0.2 else -r) for r in written]
    matrix = rng.normal(size=(len(records), dim)).astype(np.float32)
    latest: dict[int, np.ndarray] = {}
    for rowid, vector in zip(records, matrix, strict=True):
        if rowid > 0:
            latest[rowid] = vector
        else:
            latest.pop(-rowid, None)
    removed -= changed
    new_rowids = np.array(sorted(changed), dtype=np.int64)
    new_matrix = rng.normal(size=(len(new_rowids), dim)).astype(np.float32)
    for rowid in removed:
        latest.pop(rowid, None)
    latest.update(zip(new_rowids.tolist(), new_matrix, strict=True))
    snapshot = Snapshot("u", 1, np.array(records, dtype=np.int64), matrix)
    gone = np.array(sorted(removed), dtype=np.int64)
    merged = _merged(snapshot, new_rowids, new_matrix, gone)
    assert merged["rowid"].tolist() == sorted(latest)
    for rowid, vector in zip(merged["rowid"].tolist(), merged["vector"], strict=True):
        assert np.array_equal(vector, latest[rowid])


def test_the_writer_keeps_the_file_it_appended_so_its_first_search_maps_nothing(
    make_store: MakeStore, db_path: Path
) -> None:
    """After a bulk index the writing process searches the file it has just appended to, with
    its live rows already known: the first search neither maps the file again nor reads every
    record of it (on a 100K file that read faulted in 154 MB). Shown by swapping the file on
    disk for junk after the writes: the writer's search stays exact and never looks at it."""
    store = make_store()
    store.set_identity(IDENTITY)
    for start in range(0, 600, 100):
        store.upsert(chunks(start, start + 100, seed=start))
    assert _header(db_path).ascending
    junk = db_path.with_name("junk")
    junk.write_bytes(b"junk" * 100)
    os.replace(junk, side_file(db_path))
    assert_exact(store, seed=2)
    assert side_file(db_path).read_bytes() == b"junk" * 100
    assert_exact(make_store(), seed=3)  # another process's store rebuilds the junk file


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(["add", "change", "delete", "optimize"]), st.integers(1, 40)),
        min_size=1,
        max_size=8,
    )
)
def test_a_file_marked_ascending_holds_exactly_the_live_rows_in_order(
    steps: list[tuple[str, int]],
) -> None:
    """The header's ``ascending`` lets a reader skip reading every record to find the live ones,
    so it must never be set on a file with a replaced or removed record: after any writes, a
    file marked so holds each live rowid once, ascending, and a store opened on it is exact."""
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "engram.sqlite"
        opened = [SQLiteStore(SQLiteOptions(path=path))]
        try:
            store = opened[0]
            store.set_identity(IDENTITY)
            top = 0
            for i, (step, size) in enumerate(steps):
                if step == "add":
                    store.upsert(chunks(top, top + size, seed=i))
                    top += size
                elif step == "change" and top:
                    store.upsert(chunks(max(0, top - size), top, seed=100 + i))
                elif step == "delete":
                    store.delete([f"c{j}" for j in range(size % 7, top, 7)][:3])
                else:
                    store.optimize()
                if not side_file(path).exists():
                    continue
                header = _header(path)
                if header.ascending:
                    _assert_live_at(store, side_file(path), header.generation)
                opened.append(SQLiteStore(SQLiteOptions(path=path)))
                assert_exact(opened[-1], seed=i)
            store.close()  # appends what it held back: the file is then exactly the live rows
            opened.append(SQLiteStore(SQLiteOptions(path=path)))
            if side_file(path).exists() and _header(path).ascending:
                records = load(side_file(path))
                assert records is not None
                live = opened[-1].connection.execute("SELECT rowid FROM vectors ORDER BY rowid")
                assert records.rowids.tolist() == [r[0] for r in live]
        finally:
            for s in opened:
                s.close()


def _assert_live_at(store: SQLiteStore, file: Path, generation: int) -> None:
    """A file marked ascending at ``generation`` holds each row live then once, in order: every
    row unchanged since is there, and every row there is live now or was changed or removed
    after it (the file may be behind the store by fewer than APPEND_AT rows)."""
    records = load(file)
    assert records is not None
    rowids = records.rowids.tolist()
    assert rowids == sorted(set(rowids)) and all(r > 0 for r in rowids)
    conn = store.connection
    settled = {
        r for (r,) in conn.execute("SELECT rowid FROM vectors WHERE generation <= ?", (generation,))
    }
    later = {
        r
        for (r,) in conn.execute(
            "SELECT rowid FROM vectors WHERE generation > ?1 UNION "
            "SELECT rowid FROM vector_tombstones WHERE generation > ?1",
            (generation,),
        )
    }
    assert settled <= set(rowids) <= settled | later


def test_the_header_cache_reads_the_file_again_only_when_it_moved(tmp_path: Path) -> None:
    """A writer asks for the header on every write: an unchanged file is one ``stat``; an
    append (more bytes) or a rewrite (a new inode) is read again; a missing file is None."""
    path = tmp_path / "side"
    cache = HeaderCache(path)
    assert cache() is None
    first = Header(store_uuid="u", generation=1, dimension=DIM, count=1)
    rewrite(path, first, pack(np.array([1]), np.ones((1, DIM), dtype=np.float32)))
    assert cache() == first
    # Same inode, size and mtime: the cached header stands, whatever the bytes say now.
    before = path.stat()
    with path.open("r+b") as fh:
        fh.write(b"not a header")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache() == first
    rewrite(path, first, pack(np.array([1]), np.ones((1, DIM), dtype=np.float32)))
    second = Header(store_uuid="u", generation=2, dimension=DIM, count=2)
    assert append(path, first, second, pack(np.array([2]), np.ones((1, DIM), dtype=np.float32)))
    assert cache() == second
    third = Header(store_uuid="u", generation=3, dimension=DIM, count=2)
    rewrite(path, third, pack(np.array([1, 2]), np.ones((2, DIM), dtype=np.float32)))
    assert cache() == third  # same size, a new file
    path.unlink()
    assert cache() is None
