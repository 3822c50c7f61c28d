"""Rows to pydantic records and back: the column list every chunk query selects, JSON metadata."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engram import Chunk, Document, Metadata, StoreError
from engram_sqlite.vectors import decode

CHUNK_COLUMNS = "c.rowid, c.id, c.document_id, c.document_hash, c.text, c.metadata, v.vector"
CHUNKS = "chunks c LEFT JOIN vectors v ON v.rowid = c.rowid"


def to_chunk(row: Sequence[Any]) -> Chunk:
    """A row selected with ``CHUNK_COLUMNS`` from ``CHUNKS`` (rowid first) as a Chunk."""
    _, cid, document_id, document_hash, text, metadata, vector = row[:7]
    return Chunk(
        id=cid,
        document_id=document_id,
        document_hash=document_hash,
        text=text,
        metadata=json.loads(metadata),
        vector=None if vector is None else decode(vector),
    )


def to_document(row: Sequence[Any]) -> Document:
    """A record as written (validated then): built without validating it again, since every
    index run reads all of them (a no-op re-index should cost little more than a stat a file)."""
    did, hash_, metadata = row
    return Document.model_construct(id=did, hash=hash_, metadata=json.loads(metadata))


def metadata_json(metadata: Metadata, owner: str) -> str:
    """Metadata as strict JSON; NaN and infinities are refused because JSON cannot hold them."""
    if not metadata:
        return "{}"  # most chunks of a bulk import: skip the encoder (~6 µs a chunk)
    try:
        return json.dumps(metadata, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    except ValueError as exc:
        raise StoreError(
            f"the metadata of {owner} cannot be stored as JSON ({exc}); replace NaN or infinite "
            "numbers with null or a string"
        ) from None


def id_list(ids: Sequence[str] | Sequence[int]) -> str:
    """A list of ids bound as ONE parameter and read back with ``json_each``: no size limit."""
    return json.dumps(list(ids), ensure_ascii=False)
