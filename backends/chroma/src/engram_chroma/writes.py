"""Preparing chunk writes for Chroma: a chunk as a checked row, writes cut into batches Chroma
and a server accept, and the metadata keys an upsert must clear (Chroma merges metadata).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from chromadb.api.models.Collection import Collection

from engram import Chunk, IndexIdentity, StoreError
from engram_chroma import changelog, records, vectors
from engram_chroma.changelog import batched
from engram_chroma.reads import METADATA

WRITE_BATCH = 1000  # records per Chroma write (its limit is 5461)
WRITE_CHARS = 8_000_000  # text per Chroma write, well under a server's 40 MiB request limit

Row = tuple[str, list[float], str, dict[str, Any]]


def encode(chunk: Chunk, identity: IndexIdentity | None) -> Row:
    """A chunk as (id, embedding, document, metadata), checked against the identity."""
    if identity is None:
        raise StoreError(
            f"chunk {chunk.id!r} cannot be stored before the store has an index identity: call "
            f"set_identity(IndexIdentity(...)) first (Chroma needs the vector dimension even for "
            f"chunks without a vector)"
        )
    length: float | None = None
    if chunk.vector is None:
        embedding = vectors.placeholder(chunk.id, identity.dimension)
    else:
        checked = vectors.check(chunk.vector, identity, f"chunk {chunk.id!r}")
        embedding, length = vectors.split(checked)
    metadata = records.chunk_metadata(
        chunk.metadata,
        owner=f"chunk {chunk.id!r}",
        document_id=chunk.document_id,
        document_hash=chunk.document_hash,
        has_vector=chunk.vector is not None,
    )
    if length is not None:
        metadata[records.NORM_KEY] = length
    return chunk.id, embedding, chunk.text, metadata


def forget_old_keys(chunks: Collection, rows: list[Row]) -> None:
    """Chroma merges the metadata of an existing record with the new one, so every key the old
    version had and the new one lacks is set to None (which deletes it)."""
    for part in batched([r[0] for r in rows], changelog.PAGE):
        got = chunks.get(ids=list(part), include=METADATA)
        old = {i: set(m or {}) for i, m in zip(got["ids"], got["metadatas"] or [], strict=True)}
        for row in rows:
            for key in old.get(row[0], set()) - set(row[3]):
                row[3][key] = None


def batches(rows: list[Row]) -> Iterator[list[Row]]:
    """``rows`` cut into writes of at most ``WRITE_BATCH`` records and ``WRITE_CHARS`` of text."""
    part: list[Row] = []
    chars = 0
    for row in rows:
        if part and (len(part) >= WRITE_BATCH or chars + len(row[2]) > WRITE_CHARS):
            yield part
            part, chars = [], 0
        part.append(row)
        chars += len(row[2])
    if part:
        yield part
