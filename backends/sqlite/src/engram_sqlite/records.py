"""Rows to pydantic records and back: the column list every chunk query selects, JSON metadata."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from engram import (
    Chunk,
    Document,
    Metadata,
    Stamp,
    StoreError,
    stamp_number,
    stamp_text,
    stat_from,
)
from engram_sqlite.vectors import decode

CHUNK_COLUMNS = "c.rowid, c.id, c.document_id, c.document_hash, c.text, c.metadata, v.vector"
CHUNKS = "chunks c LEFT JOIN vectors v ON v.rowid = c.rowid"
# The same columns without the vector (from ``chunks c`` alone): a search's hits leave it out.
TEXT_COLUMNS = CHUNK_COLUMNS.replace("v.vector", "NULL")


def to_chunk(row: Sequence[Any]) -> Chunk:
    """A row selected with ``CHUNK_COLUMNS`` from ``CHUNKS`` (rowid first) as a Chunk."""
    _, cid, document_id, document_hash, text, metadata, vector = row[:7]
    fields: dict[str, Any] = {
        "id": cid,
        "document_id": document_id,
        "document_hash": document_hash,
        "text": text,
        "metadata": {} if metadata == "{}" else json.loads(metadata),  # most chunks: none
    }
    if vector is not None:  # a search's hits have none: its validator then never runs
        fields["vector"] = decode(vector)
    return Chunk(**fields)


def to_document(row: Sequence[Any]) -> Document:
    """A record as written (validated then): built without validating it again, since every
    index run reads all of them (a no-op re-index should cost little more than a stat a file)."""
    did, hash_, metadata = row
    return Document.model_construct(id=did, hash=hash_, metadata=json.loads(metadata))


STAMP_COLUMNS = "source, path, size, mtime_ns, inode, ctime_ns, indexed_at"
PUT_DOCUMENT = (  # parameters: id, hash, metadata JSON, then ``stamp_columns``
    f"INSERT INTO documents(id, hash, metadata, {STAMP_COLUMNS}) "
    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET "
    "hash = excluded.hash, metadata = excluded.metadata, source = excluded.source, "
    "path = excluded.path, size = excluded.size, mtime_ns = excluded.mtime_ns, "
    "inode = excluded.inode, ctime_ns = excluded.ctime_ns, indexed_at = excluded.indexed_at"
)
PRUNE_DOCUMENT = (  # parameters: the document id, the JSON list of chunk ids to keep
    "DELETE FROM chunks WHERE document_id = ? AND id NOT IN (SELECT value FROM json_each(?))"
)


MANY_ROOTS = 32  # more roots (a collection indexing its files one by one) go as one JSON list


def stamps_query(roots: int, sources: int) -> str:
    """The stamps (``engram.stamps.Stamp``) of the records of ``sources`` sources under
    ``roots`` roots, from the columns ``put_document`` fills (migrations 4 and 6): one plain
    query for every label, no JSON parsed, no ``Document`` built (a no-op re-index of 10K files
    reads 10K of them), each row already the ``Stamp`` tuple. Parameters: the settling time,
    the sources, then per root the root, root + "/" and root + "0" ("0" follows "/": the range
    is exactly the paths that start with root + "/"). The mtime test is the same IEEE double
    arithmetic as ``stamp_of``'s."""
    if roots > MANY_ROOTS:  # one JSON parameter: no limit on bound variables
        under = (  # documents.path: json_each has a column named path too
            "EXISTS (SELECT 1 FROM json_each(?) r WHERE documents.path = r.value "
            "OR (documents.path >= r.value || '/' AND documents.path < r.value || '0'))"
        )
    else:
        under = " OR ".join(["(path = ? OR (path >= ? AND path < ?))"] * roots) or "0"
    return (
        "SELECT CASE WHEN hash != '' AND mtime_ns / 1e9 + ? <= indexed_at THEN size END, "
        "mtime_ns, inode, ctime_ns, source, id FROM documents "
        f"WHERE source IN ({', '.join('?' * sources) or 'NULL'}) AND ({under})"
    )


def stamps_statement(
    sources: Sequence[str], roots: Sequence[str], settled_s: float
) -> tuple[str, list[Any]]:
    """``stamps_query`` with its parameters."""
    head = [settled_s, *sources]
    if len(roots) > MANY_ROOTS:
        return stamps_query(len(roots), len(sources)), [*head, id_list(roots)]
    under = (p for root in roots for p in (root, root + "/", root + "0"))
    return stamps_query(len(roots), len(sources)), [*head, *under]


def to_stamps(rows: Sequence[Stamp]) -> dict[str, Stamp]:
    """Rows selected with ``stamps_query`` (each a ``Stamp``, the id last) by document id."""
    return {row[5]: row for row in rows}


def document_row(document: Document) -> tuple[Any, ...]:
    """The parameters of ``PUT_DOCUMENT`` for a record."""
    meta = metadata_json(document.metadata, f"document {document.id!r}")
    return (document.id, document.hash, meta, *stamp_columns(document))


def stamp_columns(document: Document) -> tuple[Any, ...]:
    """The values of ``STAMP_COLUMNS`` for a record, typed as ``engram.stamps`` reads them."""
    meta = document.metadata
    stat = stat_from(meta.get("stat")) or (None, None, None, None)
    return (
        stamp_text(meta.get("source")),
        stamp_text(meta.get("path")),
        *stat,
        stamp_number(meta.get("indexed_at")),
    )


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
