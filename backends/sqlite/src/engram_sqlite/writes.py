"""Writing a batch of chunks: rows, vectors and FTS entries, each with one ``executemany``.

New ids get the next rowids directly (nothing to delete first); ids already stored are updated in
place, and their old FTS entry is removed only when their text changed. Vectors are checked and
converted for the whole batch at once. The caller holds the write transaction and has bumped the
generation; vectors are written with it so the side matrix can catch up (``matrix.py``).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence

import numpy as np

from engram import Chunk, IndexIdentity, StoreError
from engram_sqlite.fts import index_text
from engram_sqlite.records import id_list, metadata_json
from engram_sqlite.vectors import prepare_many

# chunks.vector_state: no vector; a vector with a direction; a zero vector (similarity 0 with
# everything; the partial index chunks_zero_vector spells ZERO as the literal 2).
NO_VECTOR, INDEXED, ZERO = 0, 1, 2

_INSERT = (
    "INSERT INTO chunks(rowid, id, document_id, document_hash, metadata, vector_state, text) "
    "VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_UPDATE = (
    "UPDATE chunks SET document_id = ?, document_hash = ?, metadata = ?, vector_state = ?, "
    "text = ? WHERE rowid = ?"
)
_FTS_ADD = "INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)"
_FTS_REMOVE = "INSERT INTO chunks_fts(chunks_fts, rowid, text) VALUES ('delete', ?, ?)"
_VECTOR_SET = (
    "INSERT INTO vectors(rowid, vector, generation) VALUES (?, ?, ?) "
    "ON CONFLICT(rowid) DO UPDATE SET vector = excluded.vector, generation = excluded.generation"
)
_VECTOR_DROP = "DELETE FROM vectors WHERE rowid = ?"


def metadata_for(chunks: Sequence[Chunk]) -> list[str]:
    """Each chunk's metadata as JSON (checked before the transaction starts)."""
    return [metadata_json(c.metadata, f"chunk {c.id!r}") for c in chunks]


def latest_by_id(chunks: Sequence[Chunk]) -> list[Chunk]:
    """One chunk per id, the last one given winning (as one upsert after another would)."""
    return list({c.id: c for c in chunks}.values())


def write_chunks(
    conn: sqlite3.Connection,
    chunks: Sequence[Chunk],
    metadata: Sequence[str],
    identity: IndexIdentity | None,
    generation: int,
) -> None:
    """Insert or update ``chunks`` (unique ids) with their ``metadata`` JSON."""
    blobs, states = _vectors(chunks, identity)
    stored = dict(
        (cid, (rowid, text))
        for cid, rowid, text in conn.execute(
            "SELECT id, rowid, text FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (id_list([c.id for c in chunks]),),
        )
    )
    (seq,) = conn.execute(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0)"
    ).fetchone()
    next_rowid = int(seq) + 1
    inserts, updates, fts_add, fts_remove, vector_set, vector_drop = [], [], [], [], [], []
    for chunk, meta, blob, state in zip(chunks, metadata, blobs, states, strict=True):
        old = stored.get(chunk.id)
        if old is None:
            rowid, next_rowid = next_rowid, next_rowid + 1
            inserts.append(
                (rowid, chunk.id, chunk.document_id, chunk.document_hash, meta, state, chunk.text)
            )
            fts_add.append((rowid, index_text(chunk.text)))
        else:
            rowid, old_text = old
            updates.append((chunk.document_id, chunk.document_hash, meta, state, chunk.text, rowid))
            if old_text != chunk.text:
                fts_remove.append((rowid, index_text(old_text)))
                fts_add.append((rowid, index_text(chunk.text)))
            if blob is None:
                vector_drop.append((rowid,))
        if blob is not None:
            vector_set.append((rowid, blob, generation))
    conn.executemany(_FTS_REMOVE, fts_remove)
    conn.executemany(_INSERT, inserts)
    conn.executemany(_UPDATE, updates)
    conn.executemany(_FTS_ADD, fts_add)
    conn.executemany(_VECTOR_SET, vector_set)
    conn.executemany(_VECTOR_DROP, vector_drop)


def _vectors(
    chunks: Sequence[Chunk], identity: IndexIdentity | None
) -> tuple[list[bytes | None], list[int]]:
    """Each chunk's stored vector bytes (None without one) and its ``vector_state``."""
    given = [c for c in chunks if c.vector is not None]
    blobs: list[bytes | None] = [None] * len(chunks)
    states = [NO_VECTOR] * len(chunks)
    if not given:
        return blobs, states
    if identity is None:
        raise StoreError(
            f"chunk {given[0].id!r} has a vector but the store has no index identity yet; call "
            "set_identity(IndexIdentity(...)) before upserting vectors (or upsert with "
            "vector=None for keyword-only chunks)"
        )
    matrix = prepare_many(
        [c.vector for c in given if c.vector is not None], identity, [c.id for c in given]
    )
    zero = [not bool(z) for z in np.any(matrix, axis=1).tolist()]
    rows = iter(zip(matrix, zero, strict=True))
    for i, chunk in enumerate(chunks):
        if chunk.vector is None:
            continue
        row, is_zero = next(rows)
        blobs[i] = row.tobytes()
        states[i] = ZERO if bool(is_zero) else INDEXED
    return blobs, states
