"""Rows to engram models and back: the column lists every statement shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engram import Chunk, Document, IndexIdentity, StoreError
from engram_postgres.jsontext import dumps, has_nul
from engram_postgres.words import tsvector_text

# Selected as "c.<column>": id, document_id, document_hash, text, metadata, then the vector (or
# NULL when a search does not return vectors).
CHUNK_COLUMNS = "c.id, c.document_id, c.document_hash, c.text, c.metadata"


def to_chunk(row: Sequence[Any]) -> Chunk:
    vector = row[5]
    return Chunk(
        id=row[0],
        document_id=row[1],
        document_hash=row[2],
        text=row[3],
        metadata=row[4],
        vector=None if vector is None else _floats(vector),
    )


def _floats(vector: Any) -> list[float]:
    """A pgvector ``Vector`` (or array) as Python floats (float32 widened exactly)."""
    array = vector.to_numpy() if hasattr(vector, "to_numpy") else np.asarray(vector)
    values: list[float] = array.astype(np.float64).tolist()
    return values


def to_document(row: Sequence[Any]) -> Document:
    return Document(id=row[0], hash=row[1], metadata=row[2])


def to_identity(value: Any) -> IndexIdentity | None:
    return None if value is None else IndexIdentity.model_validate(value)


def refuse_nul(chunks: Sequence[Chunk], documents: Sequence[Document] = ()) -> None:
    """PostgreSQL text cannot hold U+0000: refuse the batch before writing any of it."""
    for c in chunks:
        if has_nul([c.id, c.document_id, c.document_hash, c.text]) or has_nul(c.metadata):
            raise StoreError(
                f"chunk {c.id!r} holds a NUL character (U+0000), which PostgreSQL text cannot "
                f"store; remove it from the source text or metadata"
            )
    for d in documents:
        if has_nul([d.id, d.hash]) or has_nul(d.metadata):
            raise StoreError(
                f"document {d.id!r} holds a NUL character (U+0000), which PostgreSQL text "
                f"cannot store; remove it from its metadata"
            )


def chunk_params(c: Chunk, vector: np.ndarray[Any, Any] | None) -> tuple[Any, ...]:
    return (
        c.id,
        c.document_id,
        c.document_hash,
        c.text,
        dumps(c.metadata),
        vector,
        tsvector_text(c.text),
    )


def document_params(d: Document) -> tuple[str, str, str]:
    return (d.id, d.hash, dumps(d.metadata))
