"""Collections: named sets of documents with the caller's own ids, kept as markdown and indexed
like any note. The LangChain and LlamaIndex integrations are built on them.

``Memory.collection(name)`` opens one.
"""

from engram.collections.collection import Collection, CollectionDocument, CollectionHit

__all__ = ["Collection", "CollectionDocument", "CollectionHit"]
