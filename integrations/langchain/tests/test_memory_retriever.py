"""``EngramMemoryRetriever``: the whole memory through ``Memory.search`` on every store, with
the per-call options (``k``, ``type``, ``filter``) and the documents' ids and metadata."""

from __future__ import annotations

import pytest

from engram import Memory
from engram_langchain import EngramMemoryRetriever
from support import MemoryFactory


@pytest.fixture
def memory(open_memory: MemoryFactory) -> Memory:
    memory = open_memory()
    memory.remember("The user prefers tabs over spaces.", type="preference")
    memory.remember("The user likes short answers.", type="preference", scope="user")
    memory.remember("We decided to deploy on Tuesdays.", type="decision")
    return memory


def test_documents_are_the_searchs_hits_with_their_chunk_ids(memory: Memory) -> None:
    docs = EngramMemoryRetriever(memory=memory, k=3).invoke("what are my preferences")
    hits = memory.search("what are my preferences", limit=3).hits
    assert [d.id for d in docs] == [h.chunk.id for h in hits]
    assert {d.metadata["type"] for d in docs[:2]} == {"preference"}
    assert all(d.metadata["path"].endswith(".md") and "score" in d.metadata for d in docs)


def test_type_filter_and_k_narrow_per_call(memory: Memory) -> None:
    retriever = EngramMemoryRetriever(memory=memory, k=5, score_key=None)
    decisions = retriever.invoke("deploy tuesdays", type="decision")
    assert [d.metadata["type"] for d in decisions] == ["decision"]
    assert "score" not in decisions[0].metadata
    mine = retriever.invoke("what are my preferences", filter={"scope": "user"})
    assert [d.page_content for d in mine] == ["The user likes short answers."]
    assert len(retriever.invoke("what are my preferences", k=1)) == 1
