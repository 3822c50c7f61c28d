"""Collections: documents with the caller's ids, kept as markdown, indexed like notes, filtered on
the caller's metadata keys, and restored by a rebuild."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.chunking.collection import file_name
from engram.collections import CollectionDocument
from engram.errors import InvalidMemory
from engram.filters import And, Contains, Eq, In, Ne, Not, Or, Range
from support import MemoryFactory

Doc = CollectionDocument


def fill(open_memory: MemoryFactory) -> Any:
    memory = open_memory()
    col = memory.collection("docs")
    col.add(
        [
            Doc(id="a", text="the billing service retries failed payments", metadata={"n": 1}),
            Doc(id="b", text="deploys go out on tuesdays", metadata={"n": 2, "tags": ["ops"]}),
            Doc(id="c", text="payments are reconciled nightly", metadata={"n": 3, "team": "pay"}),
        ]
    )
    return memory, col


def test_documents_come_back_exactly_and_in_the_order_asked(open_memory: MemoryFactory) -> None:
    _, col = fill(open_memory)
    got = col.get(["c", "missing", "a"])
    assert [d.id for d in got] == ["c", "a"]
    assert got[0] == Doc(
        id="c", text="payments are reconciled nightly", metadata={"n": 3, "team": "pay"}
    )
    assert sorted(col.ids()) == ["a", "b", "c"] and col.count() == 3


def test_same_id_overwrites_and_delete_removes_file_and_chunks(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    memory, col = fill(open_memory)
    col.add([Doc(id="a", text="invoices are emailed monthly")])
    assert col.get(["a"]) == [Doc(id="a", text="invoices are emailed monthly")]
    assert [h.document.id for h in col.search("invoices emailed", k=1, mode="keyword")] == ["a"]
    assert col.search("retries failed", mode="keyword") == []
    col.delete(["a", "never-there"])
    assert col.get(["a"]) == [] and col.count() == 2
    assert not (tmp_path / "collections" / "docs" / file_name("a")).exists()
    assert col.search("invoices", mode="keyword") == []
    col.clear()
    assert col.count() == 0 and memory.store.count() == 0


def test_vector_search_scores_by_cosine_and_keeps_every_document(
    open_memory: MemoryFactory,
) -> None:
    _, col = fill(open_memory)
    hits = col.search("deploys go out on tuesdays", k=3, mode="vector")
    assert hits[0].document.id == "b"
    assert hits[0].score == pytest.approx(1.0, abs=1e-5)
    assert len(hits) == 3 and hits[0].score >= hits[1].score >= hits[2].score
    by_vector = col.search_by_vector(col.embed_query("deploys go out on tuesdays"), k=1)
    assert [h.document.id for h in by_vector] == ["b"]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        (Eq(field="n", value=2), ["b"]),
        (Ne(field="n", value=2), ["a", "c"]),
        (In(field="n", values=[1, 3]), ["a", "c"]),
        (Contains(field="tags", value="ops"), ["b"]),
        (Range(field="n", gte=2), ["b", "c"]),
        (And(filters=[Range(field="n", gt=1), Eq(field="team", value="pay")]), ["c"]),
        (Or(filters=[Eq(field="n", value=1), Eq(field="team", value="pay")]), ["a", "c"]),
        (Not(filter=Eq(field="n", value=1)), ["b", "c"]),
    ],
)
def test_filters_name_the_callers_keys(
    open_memory: MemoryFactory, flt: Any, expected: list[str]
) -> None:
    _, col = fill(open_memory)
    hits = col.search("payments deploys billing", k=10, mode="vector", filter=flt)
    assert sorted(h.document.id for h in hits) == expected


def test_callers_keys_never_meet_engrams_own_fields(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    col = memory.collection("docs")
    col.add([Doc(id="x", text="alpha", metadata={"path": "mine", "source": "pdf", "title": "T"})])
    assert col.get(["x"])[0].metadata == {"path": "mine", "source": "pdf", "title": "T"}
    hits = col.search("alpha", mode="vector", filter=Eq(field="source", value="pdf"))
    assert [h.document.id for h in hits] == ["x"]
    assert memory.search("alpha").hits[0].chunk.metadata["source"] == "memory"


def test_collections_are_separate(open_memory: MemoryFactory) -> None:
    memory, col = fill(open_memory)
    other = memory.collection("other")
    other.add([Doc(id="a", text="the billing service retries failed payments")])
    assert [h.document.id for h in other.search("billing retries", k=5)] == ["a"]
    assert other.get(["b"]) == [] and col.count() == 3
    other.clear()
    assert col.count() == 3


def test_rebuild_restores_a_collection_from_its_files(open_memory: MemoryFactory) -> None:
    memory, col = fill(open_memory)
    memory.rebuild()
    hits = col.search("reconciled nightly", k=1, filter=Eq(field="team", value="pay"))
    assert [h.document.id for h in hits] == ["c"]


def test_private_spans_never_reach_the_files(open_memory: MemoryFactory, tmp_path: Path) -> None:
    col = open_memory().collection("docs")
    col.add(
        [
            Doc(
                id="p",
                text="key <PRIVATE>hunter2</private > ok",
                metadata={"k": "<private>s</private>v"},
            )
        ]
    )
    assert col.get(["p"]) == [Doc(id="p", text="key  ok", metadata={"k": "v"})]
    written = "".join(p.read_text() for p in (tmp_path / "collections").rglob("*.md"))
    assert "hunter2" not in written and "s</" not in written


@pytest.mark.parametrize(
    ("doc", "problem"),
    [
        (Doc(id="", text="t"), "non-empty"),
        (Doc(id="n", text="t", metadata={"x": float("nan")}), "JSON"),
        (Doc(id="o", text="t", metadata={"x": object()}), "JSON"),
        (Doc(id="z", text="a\x00b"), "NUL"),
        (Doc(id="s", text="a\ud800b"), "surrogate"),
        (Doc(id="\udfff", text="t"), "surrogate"),
        (Doc(id="m", text="t", metadata={"k": ["\ud800"]}), "surrogate"),
        (Doc(id="big", text="x" * 6_000_000), "max_file_bytes"),
    ],
)
def test_bad_documents_are_refused_before_anything_is_written(
    open_memory: MemoryFactory, doc: Doc, problem: str
) -> None:
    _, col = fill(open_memory)
    with pytest.raises(InvalidMemory, match=problem):
        col.add([Doc(id="fine", text="fine"), doc])
    assert col.get(["fine"]) == [] and col.count() == 3


def test_a_bad_collection_name_is_refused(open_memory: MemoryFactory) -> None:
    with pytest.raises(InvalidMemory, match="collection name"):
        open_memory().collection("../escape")


json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=20)
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=8,
)
no_tags = st.text(max_size=200).filter(lambda s: "<" not in s and "\x00" not in s)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    document_id=st.text(min_size=1, max_size=60),
    text=no_tags,
    metadata=st.dictionaries(
        st.text(max_size=12).filter(lambda s: "<" not in s), json_values, max_size=4
    ),
)
def test_any_document_round_trips_exactly(
    open_memory: MemoryFactory, document_id: str, text: str, metadata: dict[str, Any]
) -> None:
    """Whatever ``add`` accepts, ``get`` returns unchanged (ids, text and metadata)."""
    metadata = {k: v for k, v in metadata.items() if "<" not in str(v)}
    col = open_memory().collection("prop")
    doc = Doc(id=document_id, text=text, metadata=metadata)
    col.add([doc])
    assert col.get([document_id]) == [doc]


def test_chunks_carry_short_filter_fields_not_the_whole_metadata(
    open_memory: MemoryFactory,
) -> None:
    """A kilobyte string (LlamaIndex's node JSON) stays in the file, not in every chunk."""
    memory = open_memory()
    col = memory.collection("docs")
    long = "j" * 600
    col.add([Doc(id="x", text="alpha", metadata={"blob": long, "k": "v", "nested": {"a": 1}})])
    chunk = next(c for batch in memory.store.iter_chunks() for c in batch)
    assert chunk.metadata["meta_k"] == "v" and chunk.metadata["collection_id"] == "x"
    assert "meta_blob" not in chunk.metadata and "metadata" not in chunk.metadata
    assert "meta_nested" not in chunk.metadata
    assert col.get(["x"])[0].metadata == {"blob": long, "k": "v", "nested": {"a": 1}}


@pytest.mark.parametrize(
    "bad_id", ["a<private>secret</private>b", "<PRIVATE>secret", "x< /private >y"]
)
def test_an_id_with_a_private_tag_is_refused_by_every_call(
    open_memory: MemoryFactory, tmp_path: Path, bad_id: str
) -> None:
    coll = open_memory().collection("docs")
    coll.add([CollectionDocument(id="kept", text="kept text")])
    for call in (
        lambda: coll.add([CollectionDocument(id=bad_id, text="t")]),
        lambda: coll.get([bad_id]),
        lambda: coll.delete(["kept", bad_id]),
    ):
        with pytest.raises(InvalidMemory, match="private") as info:
            call()
        assert "secret" not in str(info.value)
    assert coll.ids() == ["kept"]  # the delete refused before removing anything
    stored = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.md"))
    assert "secret" not in stored and "private" not in stored.lower()


def test_a_lone_surrogate_is_a_clear_error_in_every_call(open_memory: MemoryFactory) -> None:
    coll = open_memory().collection("docs")
    coll.add([CollectionDocument(id="kept", text="kept text")])
    bad = "bad\ud800id"
    calls: dict[str, Callable[[], object]] = {
        "add": lambda: coll.add([CollectionDocument(id=bad, text="t")]),
        "get": lambda: coll.get([bad]),
        "delete": lambda: coll.delete([bad]),
        "search": lambda: coll.search(bad),
        "vector search": lambda: coll.search(bad, mode="vector"),
        "embed": lambda: coll.embed_documents([bad]),
    }
    for name, call in calls.items():
        with pytest.raises(InvalidMemory, match="surrogate"):
            call()
        assert coll.ids() == ["kept"], name
    assert coll.ids() == ["kept"]


def test_a_given_vector_of_the_whole_text_is_stored_not_embedded(
    open_memory: MemoryFactory,
) -> None:
    memory = open_memory(cache={"enabled": False})
    col = memory.collection("docs")
    dim = col.dimension
    given = [0.0] * dim
    given[3] = 1.0  # a vector the hash embedder would not make of this text
    before = memory.embedder.texts_embedded
    col.add([Doc(id="v", text="deploys go out on tuesdays")], vectors={"v": given})
    assert memory.embedder.texts_embedded == before
    [(hit, stored)] = col.candidates_with_vectors(given, k=1)
    assert hit.document.id == "v" and stored == pytest.approx(given)
    # A document whose private words were stripped is embedded again (the vector held them).
    col.add([Doc(id="p", text="keys <private>x1</private> rotate")], vectors={"p": given})
    assert memory.embedder.texts_embedded == before + 1
