"""``EngramMemoryRetriever``: the whole memory through ``Memory.search`` on every store, as
LlamaIndex nodes with the hits' chunk ids, narrowed by type and by an engram filter."""

from __future__ import annotations

import pytest

from engram import Eq, Memory
from engram_llamaindex import EngramMemoryRetriever


@pytest.fixture
def remembered(memory: Memory) -> Memory:
    memory.remember("The user prefers tabs over spaces.", type="preference")
    memory.remember("The user likes short answers.", type="preference", scope="user")
    memory.remember("We decided to deploy on Tuesdays.", type="decision")
    return memory


def test_nodes_are_the_searchs_hits_with_their_chunk_ids(remembered: Memory) -> None:
    nodes = EngramMemoryRetriever(remembered, k=3).retrieve("what are my preferences")
    hits = remembered.search("what are my preferences", limit=3).hits
    assert [n.node.node_id for n in nodes] == [h.chunk.id for h in hits]
    assert [n.score for n in nodes] == [h.score for h in hits]
    assert {n.node.metadata["type"] for n in nodes[:2]} == {"preference"}


def test_type_and_filter_narrow_the_search(remembered: Memory) -> None:
    decisions = EngramMemoryRetriever(remembered, type="decision").retrieve("deploy tuesdays")
    assert [n.node.metadata["type"] for n in decisions] == ["decision"]
    user = EngramMemoryRetriever(remembered, filter=Eq(field="scope", value="user"))
    texts = [n.node.get_content() for n in user.retrieve("what are my preferences")]
    assert texts == ["The user likes short answers."]
    with pytest.raises(ValueError, match="k must be 1 or more"):
        EngramMemoryRetriever(remembered, k=0)
