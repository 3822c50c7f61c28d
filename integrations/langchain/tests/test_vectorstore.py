"""What the standard suites leave out: filters, persistence, privacy, odd ids, scores, errors;
each on SQLite, LanceDB and Chroma."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from engram.errors import InvalidMemory
from engram.filters import Eq
from engram_langchain import EngramEmbeddings, EngramRetriever, EngramVectorStore, to_filter
from support import MemoryFactory

TEAM_NOTES = [
    Document(id="a", page_content="replication lag alerts", metadata={"team": "db", "n": 1}),
    Document(id="b", page_content="ingress routes traffic", metadata={"team": "web", "n": 2}),
    Document(
        id="c",
        page_content="backups run nightly",
        metadata={"team": "db", "n": 3, "tags": ["ops", "backup"], "on": "2025-03-01"},
    ),
]


@pytest.mark.parametrize(
    ("flt", "expected"),
    [
        ({"team": "db"}, ["a", "c"]),
        ({"team": "db", "n": 3}, ["c"]),
        ({"team": {"$eq": "web"}}, ["b"]),
        ({"team": {"$ne": "web"}}, ["a", "c"]),
        ({"n": {"$in": [1, 2]}}, ["a", "b"]),
        ({"n": {"$nin": [1, 2]}}, ["c"]),
        ({"n": {"$gt": 1}}, ["b", "c"]),
        ({"n": {"$gte": 2, "$lt": 3}}, ["b"]),
        ({"n": {"$lte": 1}}, ["a"]),
        ({"tags": {"$contains": "ops"}}, ["c"]),
        ({"on": {"$gte": "2025-01-01"}}, ["c"]),
        ({"$or": [{"n": 1}, {"team": "web"}]}, ["a", "b"]),
        ({"$and": [{"team": "db"}, {"n": {"$gt": 1}}]}, ["c"]),
        ({"$not": {"team": "db"}}, ["b"]),
        (Eq(field="team", value="web"), ["b"]),
    ],
)
def test_filters(store: EngramVectorStore, flt: Any, expected: list[str]) -> None:
    store.add_documents(TEAM_NOTES)
    found = store.similarity_search("anything at all", k=10, filter=flt)
    assert sorted(d.id or "" for d in found) == expected
    retriever = EngramRetriever(store=store, k=10, mode="keyword", filter=flt)
    words = "replication ingress backups"
    assert {d.id for d in retriever.invoke(words)} == set(expected)


@pytest.mark.parametrize(
    ("flt", "says"),
    [
        ({"n": {"$regex": "x"}}, "'$regex'"),
        ({"$xor": []}, "'$xor'"),
        ({"n": {"$in": 3}}, "takes a list"),
        ({"$and": []}, "non-empty list"),
    ],
)
def test_an_unknown_or_malformed_filter_is_named(flt: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("$", r"\$")):
        to_filter(flt)


def test_documents_survive_reopening_and_a_rebuild(open_memory: MemoryFactory) -> None:
    EngramVectorStore(open_memory()).add_documents(TEAM_NOTES)
    memory = open_memory()
    memory.rebuild()
    store = EngramVectorStore(memory)
    assert store.get_by_ids(["c"]) == [TEAM_NOTES[2]]
    assert [d.id for d in store.similarity_search("backups run nightly", k=1)] == ["c"]
    hits = memory.search("ingress traffic", mode="keyword").hits
    assert hits and hits[0].chunk.metadata["collection_id"] == "b"


def test_private_spans_never_reach_storage(store: EngramVectorStore) -> None:
    store.add_texts(
        ["token <private>sk-123</private> rotated"], [{"who": "<PRIVATE>ana</private>x"}], ids=["p"]
    )
    assert store.get_by_ids(["p"]) == [
        Document(id="p", page_content="token  rotated", metadata={"who": "x"})
    ]
    files = store.collection.folder.glob("*.md")
    assert all("sk-123" not in f.read_text() and "ana" not in f.read_text() for f in files)


@pytest.mark.parametrize("odd", ["a/b/../c", "ünïcødé id", "  spaced  ", "CASE", "case", "x" * 300])
def test_any_string_is_an_id(store: EngramVectorStore, odd: str) -> None:
    store.add_texts(["text of " + odd], ids=[odd])
    assert [d.id for d in store.get_by_ids([odd])] == [odd]
    assert all(p.parent == store.collection.folder for p in store.collection.folder.iterdir())
    store.delete([odd])
    assert store.get_by_ids([odd]) == []


def test_case_differing_ids_are_two_documents(store: EngramVectorStore) -> None:
    store.add_texts(["upper", "lower"], ids=["Key", "key"])
    assert [d.page_content for d in store.get_by_ids(["Key", "key"])] == ["upper", "lower"]


def test_scores_are_cosine_and_relevance_is_0_to_1(store: EngramVectorStore) -> None:
    store.add_documents(TEAM_NOTES)
    (doc, score), *_ = store.similarity_search_with_score("replication lag alerts", k=3)
    assert doc.id == "a" and score == pytest.approx(1.0, abs=1e-5)
    relevances = store.similarity_search_with_relevance_scores("replication lag alerts", k=3)
    assert all(0.0 <= r <= 1.0 for _, r in relevances) and relevances[0][1] == pytest.approx(1.0)


def test_from_texts_takes_engrams_embeddings_only(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    store = EngramVectorStore.from_texts(["alpha"], EngramEmbeddings(memory), ids=["1"])
    assert store.get_by_ids(["1"])[0].page_content == "alpha"
    assert len(store.embeddings.embed_query("alpha")) == memory.embedder.dimension
    with pytest.raises(ValueError, match="EngramEmbeddings"):
        EngramVectorStore.from_texts(["alpha"], DeterministicFakeEmbedding(size=6))


def test_bad_metadata_is_refused_and_nothing_is_written(store: EngramVectorStore) -> None:
    store.add_documents(TEAM_NOTES[:1])
    with pytest.raises(InvalidMemory, match="JSON"):
        store.add_texts(["ok", "bad"], [{}, {"when": object()}], ids=["ok", "bad"])
    assert store.get_by_ids(["ok", "bad", "a"]) == [TEAM_NOTES[0]]


def test_delete_without_ids_empties_the_collection(store: EngramVectorStore) -> None:
    store.add_documents(TEAM_NOTES)
    store.delete()
    assert store.similarity_search("backups", k=5) == [] and store.collection.count() == 0
