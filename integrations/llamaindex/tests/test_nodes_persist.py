"""Nodes come back whole (text, metadata, id, relationships, class), survive reopening the
memory and ``memory.rebuild()``, are the markdown files engram promises, and never keep a
``<private>`` span."""

from __future__ import annotations

import uuid
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from llama_index.core.schema import (
    BaseNode,
    IndexNode,
    NodeRelationship,
    RelatedNodeInfo,
    TextNode,
)
from llama_index.core.vector_stores.types import (
    MetadataFilter,
    MetadataFilters,
    VectorStoreQuery,
    VectorStoreQueryMode,
)

from engram_llamaindex import EngramEmbedding, EngramVectorStore
from support import MemoryFactory


def _rich_node() -> TextNode:
    return TextNode(
        id_="chunk-1",
        text="Replication lag alerts page the database team.\n\nSecond paragraph.",
        metadata={
            "team": "db",
            "pages": [3, 4],
            "score": 0.5,
            "doc_id": "the caller's own doc_id",  # collides with a key LlamaIndex reserves
            "nested": {"a": [1, {"b": None}]},
            "file name": "runbook.md",  # kept, though not filterable
        },
        excluded_embed_metadata_keys=["pages"],
        excluded_llm_metadata_keys=["score"],
        relationships={
            NodeRelationship.SOURCE: RelatedNodeInfo(node_id="runbook", metadata={"v": 1}),
            NodeRelationship.PREVIOUS: RelatedNodeInfo(node_id="chunk-0"),
            NodeRelationship.NEXT: RelatedNodeInfo(node_id="chunk-2"),
        },
        start_char_idx=10,
        end_char_idx=70,
        text_template="{metadata_str}\n---\n{content}",
    )


def _dump(node: BaseNode) -> dict[str, Any]:
    data = node.model_dump(mode="json")
    data["embedding"] = None
    return data


def test_a_node_round_trips_exactly(store: EngramVectorStore) -> None:
    node = _rich_node()
    index_node = IndexNode(id_="pointer", text="see the runbook", index_id="runbook-index")
    assert store.add([node, index_node]) == ["chunk-1", "pointer"]
    got = store.get_nodes(["pointer", "chunk-1", "unknown"])
    assert [type(n) for n in got] == [IndexNode, TextNode]
    assert _dump(got[1]) == _dump(node)
    assert list(got[1].metadata) == list(node.metadata)  # order kept: it is the prompt's order
    assert _dump(got[0]) == _dump(index_node)
    assert got[1].ref_doc_id == "runbook"


def test_the_node_is_a_readable_markdown_file_with_filterable_metadata(
    store: EngramVectorStore, tmp_path: Path
) -> None:
    store.add([_rich_node()])
    (path,) = (tmp_path / "collections" / "llamaindex").glob("*.md")
    content = path.read_text(encoding="utf-8")
    assert content.endswith(
        "---\nReplication lag alerts page the database team.\n\nSecond paragraph."
    )
    assert "team: db" in content and "ref_doc_id: runbook" in content
    by_ref = MetadataFilters(filters=[MetadataFilter(key="ref_doc_id", value="runbook")])
    assert [n.node_id for n in store.get_nodes(filters=by_ref)] == ["chunk-1"]
    # The collision went the LlamaIndex way for filters (doc_id is the source document)...
    by_doc = MetadataFilters(filters=[MetadataFilter(key="doc_id", value="runbook")])
    assert [n.node_id for n in store.get_nodes(filters=by_doc)] == ["chunk-1"]
    # ...and the caller's value still comes back on the node.
    assert store.get_nodes(["chunk-1"])[0].metadata["doc_id"] == "the caller's own doc_id"


def test_same_id_overwrites(store: EngramVectorStore) -> None:
    store.add([TextNode(id_="n", text="first version", metadata={"v": 1})])
    store.add([TextNode(id_="n", text="second version", metadata={"v": 2})])
    (node,) = store.get_nodes(["n"])
    assert node.get_content() == "second version" and node.metadata == {"v": 2}
    assert store.client.count() == 1


def test_nodes_survive_reopening_and_rebuild(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    store = EngramVectorStore(memory)
    store.add([_rich_node(), TextNode(id_="other", text="Kubernetes ingress routes traffic")])
    question = EngramEmbedding.from_memory(memory).get_query_embedding("replication lag alerts")
    before = store.query(VectorStoreQuery(query_embedding=question, similarity_top_k=2))
    memory.close()

    reopened = open_memory()
    again = EngramVectorStore(reopened)
    assert _dump(again.get_nodes(["chunk-1"])[0]) == _dump(_rich_node())
    after = again.query(VectorStoreQuery(query_embedding=question, similarity_top_k=2))
    assert after.ids == before.ids == ["chunk-1", "other"]

    reopened.rebuild()
    rebuilt = again.query(VectorStoreQuery(query_embedding=question, similarity_top_k=2))
    assert rebuilt.ids == before.ids
    assert [h.document.id for h in again.client.search("ingress", k=1, mode="keyword")] == ["other"]
    found = reopened.search("replication lag alerts", mode="keyword")
    assert any("collections/llamaindex/" in h.chunk.document_id for h in found.hits)


def test_private_spans_never_reach_the_files_the_index_or_the_nodes(
    store: EngramVectorStore, tmp_path: Path
) -> None:
    node = TextNode(
        id_="secret",
        text="The deploy key <private>hunter2</private> rotates monthly.",
        metadata={"owner": "ops <private>pin 8817</private>"},
    )
    store.add([node])
    (got,) = store.get_nodes(["secret"])
    assert "hunter2" not in got.get_content() and "rotates monthly" in got.get_content()
    assert "8817" not in str(got.metadata) and got.metadata["owner"].startswith("ops")
    files = "".join(p.read_text(encoding="utf-8") for p in tmp_path.rglob("*.md"))
    assert "hunter2" not in files and "8817" not in files
    assert store.client.search("hunter2", mode="keyword") == []
    assert (
        store.query(
            VectorStoreQuery(query_str="hunter2", mode=VectorStoreQueryMode.TEXT_SEARCH)
        ).ids
        == []
    )


_KEYS = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,12}", fullmatch=True).filter(
    lambda k: k not in {"_node_content", "_node_type", "_node_id"}
)
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="<"), max_size=20)
)
_VALUES = _SCALARS | st.lists(_SCALARS, max_size=4)
_TEXT = st.text(
    st.characters(blacklist_categories=["Cs", "Cc"], blacklist_characters="<"), min_size=1
).filter(lambda t: t.strip() != "")


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=_TEXT, metadata=st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_any_text_and_metadata_round_trip(
    store: EngramVectorStore, text: str, metadata: dict[str, Any]
) -> None:
    node = TextNode(id_=str(uuid.uuid4()), text=text, metadata=metadata)
    store.add([node])
    (got,) = store.get_nodes([node.node_id])
    assert _dump(got) == _dump(node)
