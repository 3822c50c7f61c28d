"""Writing a batch of chunks: rows, vectors and FTS entries, each with one ``executemany``.

New ids get the next rowids directly (nothing to delete first); ids already stored are updated in
place, and their old FTS entry is removed only when their text changed. Vectors are checked and
converted for the whole batch at once. The caller holds the write transaction and has bumped the
generation; vectors are written with it so the side matrix can catch up (``matrix.py``).

A document's re-index (``replace_chunks``) compares with what is stored instead: a one-line edit
rewrites one row and one FTS entry, not every chunk of the file.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

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
# A document's rows, and rows of other documents holding one of the given ids (moved here).
_STORED = (
    "SELECT c.rowid, c.id, c.document_id, c.document_hash, c.metadata, c.vector_state, c.text, "
    "v.vector FROM chunks c LEFT JOIN vectors v ON v.rowid = c.rowid "
    "WHERE c.document_id = ? OR c.id IN (SELECT value FROM json_each(?)) ORDER BY c.rowid"
)
# The columns of a stored row ``_STORED`` selects after its rowid, in order.
_COLUMNS = ("id", "document_id", "document_hash", "metadata", "vector_state", "text")
_DROP = "DELETE FROM chunks WHERE rowid IN (SELECT value FROM json_each(?))"


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


@dataclass
class _Plan:
    """The statements' parameter rows of one ``replace_chunks``."""

    generation: int
    inserts: list[tuple[Any, ...]] = field(default_factory=list)
    changed: dict[str, list[tuple[Any, ...]]] = field(default_factory=dict)  # UPDATE → rows
    fts_add: list[tuple[int, str]] = field(default_factory=list)
    fts_remove: list[tuple[int, str]] = field(default_factory=list)
    vector_set: list[tuple[int, bytes, int]] = field(default_factory=list)
    vector_drop: list[tuple[int]] = field(default_factory=list)

    def onto(
        self, old: tuple[Any, ...], chunk: Chunk, meta: str, blob: bytes | None, state: int
    ) -> None:
        """``chunk`` written over the stored row ``old`` (its own, or a dropped chunk's)."""
        rowid, old_text, old_vector = old[0], old[6], old[7]
        values = (chunk.id, chunk.document_id, chunk.document_hash, meta, state, chunk.text)
        # Only the columns that differ are set: an index whose column is not set is not
        # touched (the document's, when a chunk stays in it; the id's, when it keeps its id).
        differ = [i for i, value in enumerate(values) if value != old[i + 1]]
        if differ:
            sets = ", ".join(f"{_COLUMNS[i]} = ?" for i in differ)
            rows = self.changed.setdefault(f"UPDATE chunks SET {sets} WHERE rowid = ?", [])
            rows.append((*(values[i] for i in differ), rowid))
        if old_text != chunk.text:
            self.fts_remove.append((rowid, index_text(old_text)))
            self.fts_add.append((rowid, index_text(chunk.text)))
        if blob is None:
            if old_vector is not None:
                self.vector_drop.append((rowid,))
        elif blob != old_vector:
            self.vector_set.append((rowid, blob, self.generation))

    def insert(self, rowid: int, chunk: Chunk, meta: str, blob: bytes | None, state: int) -> None:
        values = (chunk.document_id, chunk.document_hash, meta, state, chunk.text)
        self.inserts.append((rowid, chunk.id, *values))
        self.fts_add.append((rowid, index_text(chunk.text)))
        if blob is not None:
            self.vector_set.append((rowid, blob, self.generation))

    def run(self, conn: sqlite3.Connection) -> None:
        """Old FTS entries go before new ones are added for the same rowids."""
        for statement, rows in (
            (_FTS_REMOVE, self.fts_remove),
            *self.changed.items(),
            (_INSERT, self.inserts),
            (_FTS_ADD, self.fts_add),
            (_VECTOR_SET, self.vector_set),
            (_VECTOR_DROP, self.vector_drop),
        ):
            if rows:
                conn.executemany(statement, rows)


def replace_chunks(
    conn: sqlite3.Connection,
    document_id: str,
    chunks: Sequence[Chunk],
    metadata: Sequence[str],
    identity: IndexIdentity | None,
    generation: int,
) -> None:
    """The chunks of ``document_id`` become exactly ``chunks`` (unique ids), writing only what
    differs: a chunk stored as given is left alone, a row gets only its changed columns, an
    unchanged text keeps its FTS entry and an unchanged vector its row; a new chunk takes the
    row of one the document no longer has (an edited paragraph: no row, index entry or
    tombstone added and removed), and the rows left over are deleted (their triggers drop their
    FTS entries and vectors)."""
    blobs, states = _vectors(chunks, identity)
    ids = [c.id for c in chunks]
    stored = {row[1]: row for row in conn.execute(_STORED, (document_id, id_list(ids)))}
    wanted = set(ids)
    spare = iter([row for row in stored.values() if row[2] == document_id and row[1] not in wanted])
    plan = _Plan(generation)
    new: list[int] = []
    for n, (chunk, meta, blob, state) in enumerate(
        zip(chunks, metadata, blobs, states, strict=True)
    ):
        old = stored.get(chunk.id) or next(spare, None)
        if old is None:
            new.append(n)
        else:
            plan.onto(old, chunk, meta, blob, state)
    left = [row[0] for row in spare]
    if new:
        first = _next_rowid(conn)
        for rowid, n in enumerate(new, first):
            plan.insert(rowid, chunks[n], metadata[n], blobs[n], states[n])
    plan.run(conn)
    if left:
        conn.execute(_DROP, (id_list(left),))


def _next_rowid(conn: sqlite3.Connection) -> int:
    """The rowid AUTOINCREMENT would give next (a rowid is never given twice)."""
    (seq,) = conn.execute(
        "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'chunks'), 0)"
    ).fetchone()
    return int(seq) + 1


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
