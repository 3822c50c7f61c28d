"""Origins on a shared store: one vault's view writes, deletes, resets and lists only its own
rows, never another's, and searches every origin's (``engram.stores.origins``). The store is the
real reference store, declared shared; the property test drives random operation sequences by two
origins and checks the other origin's rows are untouched byte for byte."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.default_plugins.memory_store import MemoryStore
from engram.errors import ConfigError
from engram.filters import Eq
from engram.models import Chunk, Document
from engram.protocols import Store
from engram.stores.origins import (
    ORIGIN_FILE,
    Origin,
    OriginStore,
    load_origin,
    open_view,
    split_stored,
)
from engram.testing import OriginViewSuite
from engram.testing.data import IDENTITY, chunk, unit_vector

A = Origin("a" * 16, "alice-laptop")
B = Origin("b" * 16, "bob-desktop")


class SharedMemoryStore(MemoryStore):
    """The reference store, as a server store says it is shared."""

    shared = True


def views() -> tuple[SharedMemoryStore, OriginStore, OriginStore]:
    inner = SharedMemoryStore()
    inner.set_identity(IDENTITY)
    a, b = open_view(inner, A), open_view(inner, B)
    assert isinstance(a, OriginStore) and isinstance(b, OriginStore)
    return inner, a, b


def write_doc(view: OriginStore, doc_id: str, n: int) -> None:
    chunks = [chunk(n, document_id=doc_id), chunk(n + 1, document_id=doc_id)]
    view.upsert(chunks)
    view.put_document(
        Document(id=doc_id, hash=f"h{n}", metadata={"chunk_ids": [c.id for c in chunks]})
    )


def snapshot(inner: MemoryStore, origin: Origin) -> tuple[Any, Any]:
    """Every row of ``origin`` in the inner store, as stored."""
    rows = sorted(
        (c.id, c.document_id, c.text, json.dumps(c.metadata, sort_keys=True))
        for batch in inner.iter_chunks()
        for c in batch
        if (split_stored(c.id) or ("",))[0] == origin.id
    )
    docs = sorted(
        (d.id, d.hash, json.dumps(d.metadata, sort_keys=True))
        for d in inner.list_documents().values()
        if d.id.startswith(origin.id)
    )
    return rows, docs


def test_a_local_store_is_not_wrapped() -> None:
    store = MemoryStore()
    assert open_view(store, A) is store


def test_same_paths_on_two_machines_are_two_documents_and_search_spans_both() -> None:
    inner, a, b = views()
    write_doc(a, "notes/deploy.md", 1)
    write_doc(b, "notes/deploy.md", 10)
    assert set(a.list_documents()) == {"notes/deploy.md"}
    assert a.list_documents()["notes/deploy.md"].hash == "h1"
    assert b.list_documents()["notes/deploy.md"].hash == "h10"
    assert a.list_documents()["notes/deploy.md"].metadata["chunk_ids"] == ["chunk-1", "chunk-2"]
    assert a.count() == 2 and b.count() == 2 and inner.count() == 4
    hits = a.vector_search(unit_vector(10), 4)
    # This origin's chunks come back exactly as they went in; another's name their origin.
    by_origin = {h.chunk.metadata.get("origin_name", "alice-laptop"): h.chunk for h in hits}
    mine = by_origin["alice-laptop"]
    written = {
        c.id: c
        for c in (chunk(1, document_id="notes/deploy.md"), chunk(2, document_id="notes/deploy.md"))
    }
    assert mine.metadata == written[mine.id].metadata
    assert set(by_origin) == {"alice-laptop", "bob-desktop"}
    assert by_origin["alice-laptop"].document_id == "notes/deploy.md"  # own: as it went in
    assert by_origin["bob-desktop"].document_id == f"{B.id}:notes/deploy.md"  # another's
    assert a.foreign(by_origin["bob-desktop"].id) and not a.foreign("chunk-1")
    assert [c.id for c in a.get(["chunk-1", by_origin["bob-desktop"].id])] == [
        "chunk-1",
        by_origin["bob-desktop"].id,
    ]


def test_nothing_one_origin_does_reaches_another_origins_rows() -> None:
    inner, a, b = views()
    write_doc(a, "notes/deploy.md", 1)
    write_doc(b, "notes/deploy.md", 10)
    before = snapshot(inner, A)
    foreign_doc = f"{A.id}:notes/deploy.md"
    b.delete([f"{A.id}:chunk-1", "chunk-1"])
    b.delete_documents([foreign_doc, "notes/deploy.md"])
    b.delete_where(Eq(field="n", value=1))
    b.put_document(Document(id="notes/deploy.md", hash="x"))
    b.reset()
    assert snapshot(inner, A) == before
    assert b.count() == 0 and b.list_documents() == {}
    assert inner.get_identity() == IDENTITY, "reset of one origin dropped the shared identity"
    assert a.foreign_document(foreign_doc) is None  # A's own
    assert b.foreign_document(foreign_doc) is not None


def test_legacy_rows_without_an_origin_are_nobodys_to_change() -> None:
    inner, a, _ = views()
    inner.upsert([chunk(5, document_id="old.md")])
    inner.put_document(Document(id="old.md", hash="h"))
    a.reset()
    a.delete_documents(["old.md"])
    assert inner.count() == 1 and "old.md" in inner.list_documents()
    assert a.list_documents() == {}
    assert a.origins()[""] == "unassigned"


OPS = st.lists(
    st.tuples(
        st.sampled_from(["upsert", "delete", "delete_docs", "delete_where", "reset", "put"]),
        st.integers(0, 5),
    ),
    max_size=25,
)


@settings(max_examples=60, deadline=None)
@given(ops_a=OPS, ops_b=OPS)
def test_any_sequence_of_writes_by_one_origin_leaves_the_others_rows_as_they_were(
    ops_a: list[tuple[str, int]], ops_b: list[tuple[str, int]]
) -> None:
    inner, a, b = views()
    for view, ops in ((a, ops_a), (b, ops_b)):
        for op, n in ops[:3]:
            if op == "upsert":
                write_doc(view, f"notes/{n}.md", n * 2)
    frozen = snapshot(inner, A)
    for op, n in ops_b:
        doc = f"notes/{n}.md"
        if op == "upsert":
            write_doc(b, doc, n * 2)
        elif op == "delete":
            b.delete([f"chunk-{n * 2}", f"{A.id}:chunk-{n * 2}"])
        elif op == "delete_docs":
            b.delete_documents([doc, f"{A.id}:{doc}"])
        elif op == "delete_where":
            b.delete_where(Eq(field="n", value=n * 2))
        elif op == "reset":
            b.reset()
        else:
            b.put_document(Document(id=doc, hash="changed"))
    assert snapshot(inner, A) == frozen


def test_the_origin_file_is_made_once_and_kept(tmp_path: Path) -> None:
    first = load_origin(tmp_path)
    again = load_origin(tmp_path)
    assert first == again and len(first.id) == 16
    assert load_origin(tmp_path, "team laptop").id == first.id  # a name never changes the id
    assert load_origin(tmp_path, "team laptop").name == "team laptop"


def test_two_processes_making_the_origin_at_once_agree(tmp_path: Path) -> None:
    code = "import sys; from pathlib import Path; from engram.stores.origins import load_origin; "
    code += "print(load_origin(Path(sys.argv[1])).id)"
    runs = [
        subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE)
        for _ in range(8)
    ]
    ids = {run.communicate(timeout=300)[0].decode().strip() for run in runs}
    assert all(run.returncode == 0 for run in runs)
    assert len(ids) == 1 and len(ids.pop()) == 16


@pytest.mark.parametrize(
    ("content", "says"),
    [("{not json", "unreadable"), ('{"id": "x; DROP TABLE"}', "no valid origin id")],
)
def test_a_broken_origin_file_is_a_clear_error(tmp_path: Path, content: str, says: str) -> None:
    path = tmp_path / ORIGIN_FILE
    path.parent.mkdir(parents=True)
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ConfigError, match=says):
        load_origin(tmp_path)


@pytest.mark.parametrize("name", ["   ", "a\nb", "x" * 500])
def test_an_unusable_origin_name_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError, match="origin name"):
        load_origin(tmp_path, name)


def test_a_name_with_sql_and_path_characters_is_only_data(tmp_path: Path) -> None:
    name = "x'; DROP TABLE chunks; --/../../etc"
    origin = load_origin(tmp_path, name)
    inner = SharedMemoryStore()
    inner.set_identity(IDENTITY)
    view = open_view(inner, origin)
    view.upsert([Chunk(id="c", document_id="d.md", text="alpha", vector=unit_vector(1))])
    assert "origin_name" not in view.get(["c"])[0].metadata  # as it went in
    assert inner.get([origin.stored("c")])[0].metadata["origin_name"] == name
    assert not (tmp_path / "etc").exists()


class TestOriginViewConformance(OriginViewSuite):
    """The view is a store like any other: the shared suite, through an origin's eyes, with
    another origin's rows beside it the whole time."""

    origin = A

    @pytest.fixture
    def shared_store(self) -> Iterator[Store]:
        inner = SharedMemoryStore()
        other = open_view(inner, B)
        yield inner
        assert other is not None
