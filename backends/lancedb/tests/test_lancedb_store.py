"""What the suite does not pin down: switching to LanceDB with one line of config, options and
their errors, vectors at the edges of float32, keyword analysis, identity and format guards, and
two handles on one folder."""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path

import lancedb
import pytest

from engram import (
    Chunk,
    ConfigError,
    Document,
    IdentityMismatch,
    Memory,
    MemoryStore,
    StoreError,
    load_config,
)
from engram.testing.data import DIMENSION, IDENTITY, OTHER_IDENTITY, chunk, unit_vector
from engram_lancedb import LanceDBOptions
from engram_lancedb.store import LanceDBStore

MakeStore = Callable[..., LanceDBStore]


def write_notes(folder: Path, count: int) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"n{i}.md").write_text(
            f"# Note {i}\n\nThe deploy of service {i} rolls back with make rollback.\n",
            encoding="utf-8",
        )


# -- configuration ---------------------------------------------------------------------------


def test_one_line_of_config_switches_a_project_to_lancedb(tmp_path: Path) -> None:
    write_notes(tmp_path / "notes", 4)
    overrides = {
        "store": {"backend": "lancedb"},
        "embedder": {"provider": "hash"},
        "vault": {"paths": ["notes"]},
    }
    with Memory.open(load_config(overrides, start=tmp_path)) as memory:
        assert isinstance(memory.store, LanceDBStore)
        assert memory.store.options.path == tmp_path / ".engram/lancedb"
        report = memory.index()
        assert report.new == 4
        hits = memory.search("rollback service 2", limit=3).hits
        assert hits and hits[0].chunk.document_id == "notes/n2.md"
        assert memory.stats()["chunks"] == 4
    assert (tmp_path / ".engram" / "lancedb" / "engram_chunks.lance").is_dir()


@pytest.mark.parametrize(
    ("store", "message"),
    [
        ({"uri": "/var/data/lance"}, "not an object-storage URI"),
        ({"uri": "s3://"}, "not an object-storage URI"),
        ({"ann_threshold": 10}, "ann_threshold"),
        ({"ann_index": "faiss"}, "ann_index"),
        ({"colour": "blue"}, "unknown setting"),
    ],
)
def test_bad_options_are_config_errors_that_name_the_field(
    tmp_path: Path, store: dict[str, object], message: str
) -> None:
    overrides = {"store": {"backend": "lancedb", **store}, "embedder": {"provider": "hash"}}
    with pytest.raises(ConfigError, match=message):
        Memory.open(load_config(overrides, start=tmp_path))


def test_storage_options_from_toml_become_strings() -> None:
    options = LanceDBOptions(
        uri="s3://bucket/prefix",
        storage_options={"allow_http": True, "client_max_retries": 2},
    )
    assert options.storage_options == {"allow_http": "true", "client_max_retries": "2"}
    assert options.remote and options.target() == "s3://bucket/prefix"
    assert "secret" not in repr(LanceDBOptions(storage_options={"aws_secret_access_key": "secret"}))


def test_a_path_that_is_a_file_is_a_clear_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    with pytest.raises(StoreError, match=r"not a folder|cannot create"):
        LanceDBStore(LanceDBOptions(path=blocker))


# -- vectors ---------------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [1e-30, 1e-20, 1.0, 1e18, 1e30])
def test_vectors_far_from_unit_length_round_trip_and_score_like_the_reference(
    make_store: MakeStore, scale: float
) -> None:
    """LanceDB computes cosine in float32; lengths that would overflow or underflow there are
    searched through their unit copy, and read back as given."""
    store, reference = make_store(), MemoryStore()
    chunks = [
        Chunk(id=f"v{i}", document_id="d", text="t", vector=[x * scale for x in unit_vector(i)])
        for i in range(8)
    ]
    zero = Chunk(id="zero", document_id="d", text="t", vector=[0.0] * DIMENSION)
    for s in (store, reference):
        s.set_identity(IDENTITY)
        s.upsert([*chunks, zero])
    for original, copy in zip(chunks, store.get([c.id for c in chunks]), strict=True):
        assert copy.vector is not None and original.vector is not None
        assert copy.vector == pytest.approx(original.vector, rel=1e-6)
    assert store.get(["zero"])[0].vector == [0.0] * DIMENSION
    for seed in range(3):
        query = [x * scale for x in unit_vector(50 + seed)]
        got = store.vector_search(query, 9)
        expected = reference.vector_search(query, 9)
        assert [h.chunk.id for h in got] == [h.chunk.id for h in expected]
        assert all(
            math.isclose(g.score, e.score, abs_tol=1e-5) for g, e in zip(got, expected, strict=True)
        )


def test_chunks_stored_before_the_identity_keep_their_place(make_store: MakeStore) -> None:
    store = make_store()
    store.upsert([Chunk(id="early", document_id="d", text="written before any embedder")])
    store.set_identity(IDENTITY)
    store.upsert([chunk(1)])
    assert store.count() == 2
    assert [h.chunk.id for h in store.keyword_search("embedder", 5)] == ["early"]
    assert [h.chunk.id for h in store.vector_search(chunk(1).vector or [], 5)] == ["chunk-1"]


# -- keyword search --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "query"),
    [
        ("the deploys were rolled back", "deploy rolling"),  # stemming
        ("un café crème", "cafe creme"),  # accents folded
        ("token " + "x" * 60, "x" * 60),  # no length limit on tokens
        ("to be or not to be", "the to"),  # no stop words dropped
        ("pg_ctl promote --wait", "PG ctl"),  # same tokenizer as the reference
        ("数据库迁移计划", "迁移"),  # CJK without spaces
    ],
)
def test_keyword_analysis(make_store: MakeStore, text: str, query: str) -> None:
    store = make_store()
    store.upsert([Chunk(id="hit", document_id="d", text=text)])
    store.upsert([Chunk(id="miss", document_id="d", text="unrelated words entirely")])
    hits = store.keyword_search(query, 5)
    assert [h.chunk.id for h in hits] == ["hit"] and hits[0].score > 0


def test_keyword_index_follows_optimize(make_store: MakeStore) -> None:
    """Rows written after the index was built are searched before and after optimize folds
    them in, and deleted rows stay gone."""
    store = make_store(optimize_every=0)
    store.upsert([Chunk(id=f"c{i}", document_id="d", text=f"alpha word{i}") for i in range(5)])
    store.optimize()
    store.upsert([Chunk(id="late", document_id="d", text="alpha latecomer")])
    store.delete(["c0"])
    for _ in range(2):
        found = {h.chunk.id for h in store.keyword_search("alpha", 10)}
        assert found == {"c1", "c2", "c3", "c4", "late"}
        store.optimize()


# -- identity, format, concurrency -----------------------------------------------------------


def test_a_store_opened_with_another_embedder_is_refused_with_the_fix(tmp_path: Path) -> None:
    write_notes(tmp_path / "notes", 2)
    base = {"store": {"backend": "lancedb"}, "vault": {"paths": ["notes"]}}
    with Memory.open(
        load_config({**base, "embedder": {"provider": "hash"}}, start=tmp_path)
    ) as memory:
        memory.index()
    other = {**base, "embedder": {"provider": "hash", "dimension": 64}}
    with Memory.open(load_config(other, start=tmp_path)) as memory:
        with pytest.raises(IdentityMismatch, match="engram rebuild"):
            memory.search("deploy")
        with pytest.raises(IdentityMismatch, match="engram rebuild"):
            memory.index()
        assert memory.store.count() == 2


def test_set_identity_names_both_identities(make_store: MakeStore) -> None:
    store = make_store()
    store.set_identity(IDENTITY)
    with pytest.raises(IdentityMismatch) as err:
        store.set_identity(OTHER_IDENTITY)
    assert IDENTITY.describe() in str(err.value) and OTHER_IDENTITY.describe() in str(err.value)


def test_a_store_of_an_unknown_format_is_refused(tmp_path: Path) -> None:
    folder = tmp_path / "lance"
    LanceDBStore(LanceDBOptions(path=folder)).set_identity(IDENTITY)
    table = lancedb.connect(folder).open_table("engram_meta")
    table.update(where="key = 'format'", values={"value": "99"})
    with pytest.raises(StoreError, match=r"format 99.*upgrade engram-lancedb"):
        LanceDBStore(LanceDBOptions(path=folder))


def test_a_second_handle_sees_the_first_ones_writes(make_store: MakeStore, tmp_path: Path) -> None:
    """Two stores on one folder (as two processes would be): a reader that checks for new
    versions on every read sees what the writer wrote."""
    writer = make_store()
    reader = make_store(read_consistency_seconds=0)
    writer.set_identity(IDENTITY)
    writer.upsert([chunk(i) for i in range(3)])
    assert reader.count() == 3 and reader.get_identity() == IDENTITY
    writer.upsert([chunk(3)])
    writer.delete(["chunk-0"])
    assert sorted(c.id for c in reader.get([f"chunk-{i}" for i in range(4)])) == [
        "chunk-1",
        "chunk-2",
        "chunk-3",
    ]


def test_tables_created_meanwhile_by_another_handle_are_joined_not_clobbered(
    make_store: MakeStore,
) -> None:
    """Two handles that both start before any table exists (and do not re-list for a minute):
    the second to create a table finds the first one's and writes into it."""
    first = make_store(read_consistency_seconds=60)
    second = make_store(read_consistency_seconds=60)
    first.put_document(Document(id="a.md", hash="1"))
    first.put_document(Document(id="c.md", hash="4"))
    second.put_document(Document(id="a.md", hash="2"))
    second.put_document(Document(id="b.md", hash="3"))
    first.upsert([Chunk(id="x", document_id="a.md", text="from the first")])
    first.upsert([Chunk(id="y", document_id="c.md", text="only the first has it")])
    second.upsert([Chunk(id="x", document_id="a.md", text="from the second")])
    fresh = make_store()
    documents = {k: d.hash for k, d in fresh.list_documents().items()}
    assert documents == {"a.md": "2", "b.md": "3", "c.md": "4"}
    assert [c.text for c in fresh.get(["x", "y"])] == ["from the second", "only the first has it"]
    assert fresh.count() == 2
