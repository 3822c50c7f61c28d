"""A LlamaIndex node ↔ an engram ``CollectionDocument``, the way LlamaIndex's own stores keep one.

The text is the document's body (so engram indexes it, strips ``<private>`` spans from it, and
``engram search`` finds it). The caller's metadata stays flat in the document's metadata, so it
can be filtered and edited in the markdown file. Everything else about the node (its class,
relationships, templates, hashes) is the JSON of ``node_to_metadata_dict`` under
``_node_content``, without the text, the embedding or the metadata, which live elsewhere.
``ref_doc_id`` (and its aliases ``doc_id`` and ``document_id``, as in LlamaIndex's stores) and
the node id (``_node_id``) are stored flat too, so ``delete(ref_doc_id)``, filters on them and
queries restricted to given node ids work. When a caller's own metadata key collides with one
of those reserved names, ``_node_content`` keeps a copy of the caller's metadata, so that key
(and its place in the order) still comes back exactly.
"""

from __future__ import annotations

import json
from typing import Any

from llama_index.core.schema import BaseNode, MetadataMode
from llama_index.core.vector_stores.utils import metadata_dict_to_node, node_to_metadata_dict

from engram import CollectionDocument

__all__ = [
    "NODE_CONTENT",
    "NODE_ID",
    "REF_DOC_ID",
    "RESERVED",
    "document_to_node",
    "node_to_document",
]

NODE_CONTENT = "_node_content"
NODE_TYPE = "_node_type"
# The node id, filterable: engram's collection search cannot yet be restricted to given ids.
NODE_ID = "_node_id"
REF_DOC_ID = "ref_doc_id"
# The source document's id under the three names node_to_metadata_dict gives it.
REF_KEYS = ("document_id", "doc_id", REF_DOC_ID)
# What node_to_metadata_dict adds next to the caller's metadata, and the node id.
RESERVED = frozenset({NODE_CONTENT, NODE_TYPE, NODE_ID, *REF_KEYS})


def node_to_document(node: BaseNode) -> CollectionDocument:
    """The document engram keeps for ``node`` (id = node id, body = the node's text)."""
    stored = node_to_metadata_dict(node, remove_text=True, flat_metadata=False)
    content: dict[str, Any] = json.loads(stored[NODE_CONTENT])
    caller: dict[str, Any] = content.get("metadata") or {}
    # Only a caller key that collides with a reserved name needs the JSON copy (with the whole
    # metadata, which keeps that key's place in the order LlamaIndex builds prompts in).
    content["metadata"] = caller if RESERVED.intersection(caller) else {}
    flat = {k: v for k, v in caller.items() if k not in RESERVED}
    flat[NODE_CONTENT] = json.dumps(content, ensure_ascii=False)
    flat[NODE_TYPE] = stored[NODE_TYPE]
    for key in REF_KEYS:
        flat[key] = stored[key]
    flat[NODE_ID] = node.node_id
    text = node.get_content(metadata_mode=MetadataMode.NONE)
    return CollectionDocument(id=node.node_id, text=text, metadata=flat)


def document_to_node(document: CollectionDocument) -> BaseNode:
    """The node ``node_to_document`` stored, rebuilt from the document engram returns."""
    if NODE_CONTENT not in document.metadata:
        raise ValueError(
            f"document {document.id!r} of this collection was not written by EngramVectorStore "
            f"(no {NODE_CONTENT!r} in its metadata); keep LlamaIndex nodes in a collection of "
            f"their own"
        )
    node = metadata_dict_to_node(dict(document.metadata), text=document.text)
    flat = {k: v for k, v in document.metadata.items() if k not in RESERVED}
    node.metadata = _merged(node.metadata, flat)
    node.embedding = None
    return node


def _merged(kept: dict[str, Any], flat: dict[str, Any]) -> dict[str, Any]:
    """The caller's metadata: the flat values (the markdown file is the truth, edits included)
    in the order of the JSON copy when there is one, reserved names from that copy."""
    merged = {
        k: v if k in RESERVED else flat[k] for k, v in kept.items() if k in RESERVED or k in flat
    }
    merged.update((k, v) for k, v in flat.items() if k not in merged)
    return merged
