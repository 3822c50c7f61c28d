"""Rows to engram models and back: the column lists every statement shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from engram import Chunk, Document, IndexIdentity
from engram_postgres.jsontext import dec, dec_value, dumps, enc
from engram_postgres.words import tsvector_text

# Selected as "c.<column>": id, document_id, document_hash, text, metadata, the unit vector and
# its norm; whatever a statement adds (a score, the seq) comes at index 7.
CHUNK_COLUMNS = "c.id, c.document_id, c.document_hash, c.text, c.metadata, c.embedding, c.norm"
EXTRA = 7


def to_chunk(row: Sequence[Any]) -> Chunk:
    """A chunk from its row; the vector is the stored unit vector times the stored norm."""
    vector = row[5]
    return Chunk(
        id=dec(row[0]),
        document_id=dec(row[1]),
        document_hash=dec(row[2]),
        text=dec(row[3]),
        metadata=dec_value(row[4]),
        vector=None if vector is None else _floats(vector, row[6]),
    )


def unit_and_norm(values: np.ndarray[Any, Any]) -> tuple[np.ndarray[Any, Any], float]:
    """A finite float64 vector as (float32 unit vector, norm): pgvector sums in float32, so
    vectors are stored unit length (a 3e30 component would overflow its cosine to NaN) and
    ``get`` gives back ``unit * norm``, the written vector up to float32 rounding."""
    scale = float(np.max(np.abs(values))) if values.size else 0.0
    if scale == 0.0:
        return values.astype(np.float32), 0.0
    scaled = values / scale
    length = float(np.linalg.norm(scaled))
    return (scaled / length).astype(np.float32), scale * length


def _floats(vector: Any, norm: float | None) -> list[float]:
    """A pgvector ``Vector`` (or array) times ``norm``, as Python floats."""
    array = vector.to_numpy() if hasattr(vector, "to_numpy") else np.asarray(vector)
    values: list[float] = (array.astype(np.float64) * (1.0 if norm is None else norm)).tolist()
    return values


def to_document(row: Sequence[Any]) -> Document:
    return Document(id=dec(row[0]), hash=dec(row[1]), metadata=dec_value(row[2]))


def to_identity(value: Any) -> IndexIdentity | None:
    return None if value is None else IndexIdentity.model_validate(value)


def chunk_params(c: Chunk, vector: np.ndarray[Any, Any] | None) -> tuple[Any, ...]:
    """The INSERT parameters of ``c``, ``vector`` the checked float64 vector (or None)."""
    unit, norm = (None, None) if vector is None else unit_and_norm(vector)
    return (
        enc(c.id),
        enc(c.document_id),
        enc(c.document_hash),
        enc(c.text),
        dumps(c.metadata),
        unit,
        norm,
        tsvector_text(c.text),
    )


def document_params(d: Document) -> tuple[str, str, str]:
    return (enc(d.id), enc(d.hash), dumps(d.metadata))
