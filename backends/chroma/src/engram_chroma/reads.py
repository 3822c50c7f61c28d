"""Reading the chunk collection: chunks by id, the ids a filter matches, and the nearest chunks
to a vector (Chroma's HNSW candidates re-scored exactly). Each function takes the collection(s) it
works on; ``ChromaStore`` runs them under its error translation and reconnect.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import numpy as np
from chromadb.api.models.Collection import Collection
from chromadb.api.types import GetResult, Include, QueryResult, Where

from engram import Chunk, Filter, Hit, matches
from engram_chroma import changelog, records, vectors
from engram_chroma.changelog import batched
from engram_chroma.connection import Collections
from engram_chroma.where import Pushdown, restrict

FULL: Include = cast(Include, ["documents", "metadatas", "embeddings"])
METADATA: Include = cast(Include, ["metadatas"])
NOTHING: Include = cast(Include, [])
HAS_VECTOR: Where = {records.VECTOR_KEY: True}
CANDIDATE_MARGIN = 10  # HNSW candidates asked for beyond k, re-scored exactly


def existing(cols: Collections, ids: list[str]) -> list[str]:
    out: list[str] = []
    for part in batched(ids, changelog.PAGE):
        out += cols.chunks.get(ids=list(part), include=NOTHING)["ids"]
    return out


def all_ids(cols: Collections) -> list[str]:
    return list(cols.chunks.get(include=NOTHING)["ids"])


def matching_ids(
    cols: Collections, flt: Filter | None, pushdown: Pushdown, *, with_vector: bool = False
) -> list[str]:
    """The ids of exactly the chunks ``flt`` matches (``with_vector``: that have a vector)."""
    if pushdown.nothing:
        return []
    if pushdown.exact:
        where = _with_vector(pushdown.where) if with_vector else pushdown.where
        return list(cols.chunks.get(where=where, include=NOTHING)["ids"])
    got = cols.chunks.get(where=pushdown.where, include=METADATA)
    metas = got["metadatas"] or []
    return [
        i
        for i, m in zip(got["ids"], metas, strict=True)
        if matches(flt, records.from_json(m))
        and (not with_vector or bool((m or {}).get(records.VECTOR_KEY)))
    ]


def keep(cols: Collections, ids: list[str], flt: Filter | None) -> set[str]:
    """Those of ``ids`` that exist and that ``flt`` matches, checked on their metadata here:
    Chroma answers ``get(ids=..., where=...)`` far slower than it hands over the metadata."""
    if flt is None:
        return set(cols.chunks.get(ids=ids, include=NOTHING)["ids"])
    got = cols.chunks.get(ids=ids, include=METADATA)
    metas = got["metadatas"] or []
    return {i for i, m in zip(got["ids"], metas, strict=True) if matches(flt, records.from_json(m))}


def fetch(chunks: Collection, ids: Sequence[str]) -> dict[str, Chunk]:
    """The chunks among ``ids``, by id."""
    out: dict[str, Chunk] = {}
    for part in batched(sorted(set(ids)), changelog.PAGE):
        got = chunks.get(ids=list(part), include=FULL)
        out.update((c.id, c) for c in _chunks(got))
    return out


def _chunks(got: GetResult) -> Iterator[Chunk]:
    documents = got["documents"] or []
    metadatas = got["metadatas"] or []
    embeddings = got["embeddings"] if got["embeddings"] is not None else []
    for chunk_id, text, meta, embedding in zip(
        got["ids"], documents, metadatas, embeddings, strict=True
    ):
        yield decode(chunk_id, text, meta, embedding)


def decode(chunk_id: str, text: str | None, meta: Any, embedding: Any) -> Chunk:
    if not records.written_by_engram(meta):
        raise records.Unreadable(f"chunk {chunk_id!r} has lost the metadata engram wrote")
    has_vector = bool(meta.get(records.VECTOR_KEY))
    return Chunk(
        id=chunk_id,
        document_id=str(meta.get(records.DOCUMENT_KEY, "")) or chunk_id,
        document_hash=str(meta.get(records.HASH_KEY, "")),
        text=text or "",
        vector=vectors.join(embedding, float(meta.get(records.NORM_KEY, 1.0)))
        if has_vector
        else None,
        metadata=records.from_json(meta),
    )


def nearest(
    chunks: Collection,
    query: vectors.Array,
    k: int,
    where: Where | None,
    ids: list[str] | None,
) -> list[Hit]:
    """Chroma's HNSW candidates (``k`` and a margin) re-scored exactly; the best ``k``.

    ``ids`` (chunks with vectors only) and ``where`` are never sent together: Chroma 1.5 answers
    that combination orders of magnitude slower than either alone.
    """
    unit = vectors.unit(query)
    wanted = k + CANDIDATE_MARGIN
    probe = _with_vector(where) if where is not None else None
    found = _Candidates(
        chunks.query(
            query_embeddings=unit.astype(np.float32).reshape(1, -1),
            n_results=wanted,
            where=probe,
            ids=ids,
            include=FULL,
        )
    )
    if probe is None and ids is None and not all(found.has_vector):
        # Stand-ins of vector-less chunks came back: ask again for real vectors only.
        found = _Candidates(
            chunks.query(
                query_embeddings=unit.astype(np.float32).reshape(1, -1),
                n_results=wanted,
                where=HAS_VECTOR,
                ids=ids,
                include=FULL,
            )
        )
    if not found.ids:
        return []
    scores = vectors.cosine(query, found.embeddings)  # Chroma returns the unit directions
    order = sorted(range(len(found.ids)), key=lambda i: (-float(scores[i]), found.ids[i]))[:k]
    return [
        Hit(chunk=found.chunk(i), score=float(scores[i]), vector_score=float(scores[i]))
        for i in order
    ]


class _Candidates:
    """One Chroma query's results, kept as arrays; chunks are built only for the hits kept."""

    def __init__(self, got: QueryResult) -> None:
        self.ids: list[str] = list(got["ids"][0])
        self.documents = (got["documents"] or [[]])[0]
        self.metadatas = (got["metadatas"] or [[]])[0]
        raw = got["embeddings"][0] if got["embeddings"] is not None else []
        self.embeddings = np.asarray(raw, dtype=np.float64)
        if not self.ids:
            self.embeddings = self.embeddings.reshape(0, 0)
        for i, m in zip(self.ids, self.metadatas, strict=True):
            if not records.written_by_engram(m):
                raise records.Unreadable(f"chunk {i!r} has lost the metadata engram wrote")
        self.has_vector = [bool((m or {}).get(records.VECTOR_KEY)) for m in self.metadatas]

    def chunk(self, i: int) -> Chunk:
        return decode(self.ids[i], self.documents[i], self.metadatas[i], self.embeddings[i])


def _with_vector(where: Where | None) -> Where:
    """``where`` AND "has a real vector"."""
    return restrict(Pushdown(where, exact=True), HAS_VECTOR)
