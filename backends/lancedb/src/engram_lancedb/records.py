"""The three tables' Arrow schemas, and chunks/documents to Arrow rows and back.

``engram_chunks`` holds one row per chunk: the chunk itself (metadata as JSON, so its types
round-trip), the keyword terms, the vector columns (only once the dimension is known from the
index identity) and the filter columns of ``facts.py``. ``engram_documents`` holds document
records, ``engram_meta`` the index identity and the store's format version.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa  # type: ignore[import-untyped]

from engram import Chunk, Document, Metadata, StoreError
from engram_lancedb.facts import facts_of
from engram_lancedb.keyword import index_terms
from engram_lancedb.vectors import NO_VECTOR, Encoded, decode

CHUNKS = "engram_chunks"
DOCUMENTS = "engram_documents"
META = "engram_meta"
FORMAT = "1"  # bump (with a migration) when the columns change

_STRINGS = pa.list_(pa.string())
_INTS = pa.list_(pa.int64())
CHUNK_FIELDS = [
    pa.field("id", pa.string(), nullable=False),
    pa.field("document_id", pa.string(), nullable=False),
    pa.field("document_hash", pa.string(), nullable=False),
    pa.field("text", pa.string(), nullable=False),
    pa.field("terms", pa.string(), nullable=False),
    pa.field("metadata", pa.string(), nullable=False),
    pa.field("state", pa.int8(), nullable=False),
    pa.field("facts", _STRINGS, nullable=False),
    pa.field("int_keys", _STRINGS, nullable=False),
    pa.field("int_vals", _INTS, nullable=False),
    pa.field("float_keys", _STRINGS, nullable=False),
    pa.field("float_vals", _INTS, nullable=False),
    pa.field("date_keys", _STRINGS, nullable=False),
    pa.field("date_vals", _INTS, nullable=False),
]
VECTOR_COLUMNS = ("vector", "raw")
# What a read selects to rebuild a Chunk (vector columns only when the table has them).
READ_COLUMNS = ["id", "document_id", "document_hash", "text", "metadata"]
DOCUMENT_SCHEMA = pa.schema(
    [
        pa.field("id", pa.string(), nullable=False),
        pa.field("hash", pa.string(), nullable=False),
        pa.field("metadata", pa.string(), nullable=False),
    ]
)
META_SCHEMA = pa.schema(
    [pa.field("key", pa.string(), nullable=False), pa.field("value", pa.string(), nullable=False)]
)


def chunk_schema(dimension: int | None) -> pa.Schema:
    """The chunks table's schema; without vector columns until the dimension is known."""
    fields = list(CHUNK_FIELDS)
    if dimension is not None:
        vector = pa.list_(pa.float32(), dimension)
        fields += [pa.field(name, vector, nullable=True) for name in VECTOR_COLUMNS]
    return pa.schema(fields)


def dimension_of(schema: pa.Schema) -> int | None:
    """The vector dimension a chunks table was made for (None: made before the identity)."""
    if "vector" not in schema.names:
        return None
    kind = schema.field("vector").type
    return int(kind.list_size) if pa.types.is_fixed_size_list(kind) else None


def metadata_json(metadata: Metadata, owner: str) -> str:
    """Metadata as strict JSON (ASCII, so any Python string survives Arrow's UTF-8)."""
    try:
        return json.dumps(metadata, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(
            f"the metadata of {owner} cannot be stored as JSON ({exc}); replace NaN or infinite "
            "numbers with null or a string"
        ) from None


def chunk_rows(
    chunks: Sequence[Chunk], encoded: Sequence[Encoded | None], dimension: int | None
) -> pa.Table:
    """Arrow rows for ``chunks`` (validated; ``encoded`` holds their vectors, None for none)."""
    columns: dict[str, list[Any]] = {f.name: [] for f in CHUNK_FIELDS}
    for chunk, vector in zip(chunks, encoded, strict=True):
        meta = metadata_json(chunk.metadata, f"chunk {chunk.id!r}")
        found = facts_of(chunk.metadata)
        row: dict[str, Any] = {
            "id": chunk.id,
            "document_id": chunk.document_id,
            "document_hash": chunk.document_hash,
            "text": chunk.text,
            "terms": index_terms(chunk.text),
            "metadata": meta,
            "state": NO_VECTOR if vector is None else vector.state,
            **vars(found),
        }
        for name, value in row.items():
            columns[name].append(value)
    arrays: dict[str, pa.Array] = {}
    try:
        for f in CHUNK_FIELDS:
            arrays[f.name] = pa.array(columns[f.name], type=f.type)
    except (pa.ArrowException, UnicodeError) as exc:
        raise StoreError(
            f"a chunk cannot be stored ({exc}); texts and ids must be valid Unicode text"
        ) from None
    if dimension is not None:
        arrays["vector"] = _vectors([e.search if e else None for e in encoded], dimension)
        arrays["raw"] = _vectors([e.raw if e else None for e in encoded], dimension)
    return pa.table(arrays, schema=chunk_schema(dimension))


def _vectors(rows: Sequence[np.ndarray | None], dimension: int) -> pa.Array:
    flat = np.zeros((len(rows), dimension), dtype=np.float32)
    missing = np.ones(len(rows), dtype=bool)
    for i, row in enumerate(rows):
        if row is not None:
            flat[i] = row
            missing[i] = False
    values = pa.array(flat.reshape(-1), type=pa.float32())
    return pa.FixedSizeListArray.from_arrays(
        values, type=pa.list_(pa.float32(), dimension), mask=pa.array(missing)
    )


def to_chunks(table: pa.Table) -> list[Chunk]:
    """Rows selected with ``READ_COLUMNS`` (+ vector columns when present) as Chunks."""
    data = table.to_pydict()
    n = table.num_rows
    search = data.get("vector", [None] * n)
    raw = data.get("raw", [None] * n)
    return [
        Chunk(
            id=data["id"][i],
            document_id=data["document_id"][i],
            document_hash=data["document_hash"][i],
            text=data["text"][i],
            metadata=json.loads(data["metadata"][i]),
            vector=decode(search[i], raw[i]),
        )
        for i in range(n)
    ]


def document_rows(documents: Sequence[Document]) -> pa.Table:
    return pa.table(
        {
            "id": [d.id for d in documents],
            "hash": [d.hash for d in documents],
            "metadata": [metadata_json(d.metadata, f"document {d.id!r}") for d in documents],
        },
        schema=DOCUMENT_SCHEMA,
    )


def to_documents(table: pa.Table) -> dict[str, Document]:
    data = table.to_pydict()
    docs = [
        Document(id=i, hash=h, metadata=json.loads(m))
        for i, h, m in zip(data["id"], data["hash"], data["metadata"], strict=True)
    ]
    return {d.id: d for d in sorted(docs, key=lambda d: d.id)}
