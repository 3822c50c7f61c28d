"""What the standard suites leave out: filters, persistence, privacy, odd ids, scores, errors;
each on SQLite, LanceDB and Chroma."""

from __future__ import annotations

import asyncio
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.embeddings import DeterministicFakeEmbedding

from engram import And, Contains, Eq, In, InputType, InvalidMemory, Ne, Not, Or, Range, load_config
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
        (Ne(field="team", value="web"), ["a", "c"]),
        (In(field="n", values=[1, 3]), ["a", "c"]),
        (Contains(field="tags", value="backup"), ["c"]),
        (Range(field="n", gt=1, lte=2), ["b"]),
        (Range(field="on", lt="2026-01-01"), ["c"]),
        (And(filters=[Eq(field="team", value="db"), Range(field="n", lt=3)]), ["a"]),
        (Or(filters=[Eq(field="n", value=2), Contains(field="tags", value="ops")]), ["b", "c"]),
        (Not(filter=In(field="n", values=[1, 2])), ["c"]),
        ({"missing": {"$ne": 1}}, ["a", "b", "c"]),
        ({"missing": {"$nin": [1]}}, ["a", "b", "c"]),
        ({"missing": {"$in": [1]}}, []),
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
        ({"my key": "x"}, "'my key'.*keys match"),
        ({"n": {"$gt": "soon"}}, "'soon' is neither a number nor an ISO date"),
        ({"n": {"$gte": True}}, "cannot be a boolean"),
        ({"n": {"$lt": [3]}}, "takes a number or an ISO date"),
        ({"n": {"$in": [[1]]}}, "takes a list of strings"),
        ({"n": {}}, "names no operator"),
        (["n"], "a dict or an engram Filter"),
    ],
)
def test_an_unknown_or_malformed_filter_is_named(flt: Any, says: str) -> None:
    with pytest.raises(ValueError, match=says.replace("$", r"\$")):
        to_filter(flt)


def test_documents_survive_closing_reopening_and_a_rebuild(
    open_memory: MemoryFactory, backend: str, tmp_path: Path
) -> None:
    config = load_config(
        {"store": {"backend": backend}, "embedder": {"provider": "hash"}}, start=tmp_path
    )
    with EngramVectorStore.from_config(config) as first:
        first.add_documents(TEAM_NOTES)
    with EngramVectorStore.from_config(config) as reopened:
        assert reopened.get_by_ids(["a", "b", "c"]) == TEAM_NOTES
    shutil.rmtree(tmp_path / ".engram")  # every local index and cache: the markdown is left
    memory = open_memory()
    kept = EngramVectorStore(memory).similarity_search("backups", k=3)
    # A server store's index is not in the folder: it is still there.
    assert kept == [] if backend != "postgres" else len(kept) == 3
    memory.rebuild()
    store = EngramVectorStore(memory)
    assert store.get_by_ids(["c"]) == [TEAM_NOTES[2]]
    assert [d.id for d in store.similarity_search("backups run nightly", k=1)] == ["c"]
    hits = memory.search("ingress traffic", mode="keyword").hits
    assert hits and hits[0].chunk.metadata["collection_id"] == "b"


def test_private_spans_never_reach_the_embedder(store: EngramVectorStore) -> None:
    embeddings = store.embeddings
    public = embeddings.embed_query("token  rotated")
    assert embeddings.embed_query("token <private>sk-123</private> rotated") == public
    assert embeddings.embed_documents(["token <Private>x</private> rotated"]) == [public]
    assert embeddings.embed_query("token sk-123 rotated") != public  # the secret would show


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


ALL = {"a", "b", "c"}


def test_delete_where_deletes_exactly_the_matches_as_langchain_chroma_does(
    store: EngramVectorStore,
) -> None:
    # langchain-chroma passes where= to Chroma's collection.delete: the matches go (among the
    # ids when both are given), nothing else. Checked against the filter cases above.
    cases: list[tuple[dict[str, Any], list[str] | None, set[str]]] = [
        ({"where": {"team": "db"}}, None, {"a", "c"}),
        ({"filter": {"n": {"$gt": 1}}}, None, {"b", "c"}),
        ({"where": {"$or": [{"n": 1}, {"team": "web"}]}}, None, {"a", "b"}),
        ({"where": {"team": "db"}}, ["c", "b"], {"c"}),
        ({"where": {"missing": {"$in": [1]}}}, None, set()),
        ({"filter": Eq(field="team", value="web")}, None, {"b"}),
    ]
    for kwargs, ids, gone in cases:
        store.add_documents(TEAM_NOTES)
        assert store.delete(ids, **kwargs) is True
        assert set(store.collection.ids()) == ALL - gone, kwargs
        found = {d.id for d in store.similarity_search("replication ingress backups", k=10)}
        assert found == ALL - gone, kwargs


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"where_document": {"$contains": "x"}}, "where_document"),
        ({"collection_only": True}, "collection_only"),
        ({"where": {}}, "empty filter"),
        ({"where": {"team": "db"}, "filter": {"n": 1}}, "not both"),
        ({"where": {"team": {"$regex": "d"}}}, "$regex"),
        ({"where": "team = 'db'"}, "dict"),
    ],
)
def test_delete_with_anything_else_refuses_and_deletes_nothing(
    store: EngramVectorStore, kwargs: dict[str, Any], says: str
) -> None:
    store.add_documents(TEAM_NOTES)
    with pytest.raises(ValueError, match=re.escape(says)):
        store.delete(**kwargs)
    assert set(store.collection.ids()) == ALL
    assert len(store.similarity_search("replication ingress backups", k=10)) == 3


def test_mmr_picks_diverse_documents_from_stored_vectors(store: EngramVectorStore) -> None:
    twins = [
        Document(id="d1", page_content="postgres replication lag alerts", metadata={"g": 1}),
        Document(id="d2", page_content="postgres replication lag alerts!", metadata={"g": 1}),
        Document(id="d3", page_content="kubernetes ingress certificates", metadata={"g": 2}),
    ]
    store.add_documents(twins)
    calls: list[int] = []
    inner = store.memory.embedder.inner
    original = inner.embed

    def counted(texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        calls.append(len(texts))
        return original(texts, input_type)

    inner.embed = counted  # type: ignore[method-assign]  # a spy: counts, then calls it
    try:
        plain = [d.id or "" for d in store.similarity_search("postgres replication lag", k=2)]
        diverse = store.max_marginal_relevance_search(
            "postgres replication lag", k=2, fetch_k=3, lambda_mult=0.1
        )
    finally:
        inner.embed = original  # type: ignore[method-assign]
    assert sorted(plain) == ["d1", "d2"]
    assert diverse[0].id in ("d1", "d2") and {d.id for d in diverse} & {"d3"}
    assert sum(calls) <= 2  # the queries only: the candidates' vectors are read, not embedded
    only = store.max_marginal_relevance_search("postgres", k=3, filter={"g": 2})
    assert [d.id for d in only] == ["d3"]


def test_the_retriever_puts_each_score_in_metadata(store: EngramVectorStore) -> None:
    store.add_documents(TEAM_NOTES)
    found = EngramRetriever(store=store, k=3).invoke("backups run nightly")
    assert found[0].id == "c" and found[0].metadata == {**TEAM_NOTES[2].metadata, "score": 1.0}
    scores = [d.metadata["score"] for d in found]
    assert scores == sorted(scores, reverse=True)
    plain = EngramRetriever(store=store, k=3, score_key=None).invoke("backups run nightly")
    assert plain[0] == TEAM_NOTES[2]
    keyed = EngramRetriever(store=store, k=1, mode="keyword", score_key="relevance")
    assert keyed.invoke("ingress", filter={"team": "web"})[0].metadata.keys() == {
        "team",
        "n",
        "relevance",
    }


async def test_concurrent_async_calls_are_safe(store: EngramVectorStore) -> None:
    """LangChain's async defaults run each call in a thread of the default executor, so calls
    gathered together reach the store's connection from several threads at once."""
    texts = [f"note {i} about topic {i % 5}" for i in range(24)]
    added = await asyncio.gather(
        *(store.aadd_texts([t], ids=[str(i)]) for i, t in enumerate(texts))
    )
    assert sorted(i for ids in added for i in ids) == sorted(map(str, range(24)))
    searches = [store.asimilarity_search(f"topic {i}", k=3) for i in range(12)]
    reads = [store.aget_by_ids([str(i)]) for i in range(12)]
    deletes = [store.adelete([str(i)]) for i in range(12, 24)]
    found, got, _ = await asyncio.gather(
        asyncio.gather(*searches), asyncio.gather(*reads), asyncio.gather(*deletes)
    )
    assert all(len(docs) == 3 for docs in found)
    assert [docs[0].page_content for docs in got] == texts[:12]
    assert sorted(store.collection.ids(), key=int) == list(map(str, range(12)))
