"""Numbered schema migrations, tracked in ``PRAGMA user_version``.

Migration N brings a file from version N-1 to N. They run inside the caller's write transaction,
so two processes opening a new file at once cannot both apply one. The vec0 table is not part of
the schema: its dimension comes from the index identity, so ``identity.py`` creates it.
"""

from __future__ import annotations

import sqlite3

from engram import StoreError
from engram_sqlite.fts import TOKENIZER

_TOKENIZE = TOKENIZER.replace("'", "''")
_STAT = "CASE WHEN json_array_length(metadata, '$.stat') = 3 THEN 1 END"
# 1 when the record's stat is four integers (``stat_from``'s test), else NULL
_STAT4 = (
    "CASE WHEN json_array_length(metadata, '$.stat') = 4 AND "
    + " AND ".join(f"json_type(metadata, '$.stat[{i}]') = 'integer'" for i in range(4))
    + " THEN 1 END"
)


def _typed(path: str, types: str) -> str:
    """The JSON value at ``path`` of a record's metadata when its type is one of ``types``."""
    return (
        f"CASE WHEN json_type(metadata, '{path}') IN ({types}) "
        f"THEN json_extract(metadata, '{path}') END"
    )


MIGRATIONS: tuple[str, ...] = (
    # 1: chunks, their vectors as given (float32), documents, meta, and the FTS5 index; triggers
    # keep vectors and FTS in step with chunks (migration 2 drops the insert/update ones).
    # Metadata sits before text so filter scans read little; vectors live apart so chunk rows
    # stay small. The text reaches Python as a BLOB: DB-API functions see a TEXT argument only up
    # to its first NUL.
    f"""
    CREATE TABLE chunks (
        rowid INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        document_id TEXT NOT NULL,
        document_hash TEXT NOT NULL DEFAULT '',
        metadata TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(metadata)),
        vector_state INTEGER NOT NULL DEFAULT 0 CHECK (vector_state IN (0, 1, 2)),
        text TEXT NOT NULL
    );
    CREATE INDEX chunks_document ON chunks(document_id);
    CREATE INDEX chunks_zero_vector ON chunks(rowid) WHERE vector_state = 2;
    CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, vector BLOB NOT NULL);
    CREATE TRIGGER chunks_vectors_delete AFTER DELETE ON chunks BEGIN
        DELETE FROM vectors WHERE rowid = old.rowid;
    END;
    CREATE TABLE documents (
        id TEXT PRIMARY KEY,
        hash TEXT NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{{}}' CHECK (json_valid(metadata))
    );
    CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    CREATE VIRTUAL TABLE chunks_fts USING fts5(text, content='', tokenize='{_TOKENIZE}');
    CREATE TRIGGER chunks_fts_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, text)
        VALUES (new.rowid, engram_fts_text(CAST(new.text AS BLOB)));
    END;
    CREATE TRIGGER chunks_fts_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text)
        VALUES ('delete', old.rowid, engram_fts_text(CAST(old.text AS BLOB)));
    END;
    CREATE TRIGGER chunks_fts_update AFTER UPDATE OF text ON chunks
    WHEN old.text IS NOT new.text BEGIN
        INSERT INTO chunks_fts(chunks_fts, rowid, text)
        VALUES ('delete', old.rowid, engram_fts_text(CAST(old.text AS BLOB)));
        INSERT INTO chunks_fts(rowid, text)
        VALUES (new.rowid, engram_fts_text(CAST(new.text AS BLOB)));
    END;
    """,
    # 2: the side matrix replaces the vec0 table (see matrix.py). Every write transaction bumps
    # meta.generation; a vector row records the generation that set it and a removed vector
    # leaves a tombstone, so a snapshot of the vectors can be brought up to date. FTS rows are
    # written by the store in batches instead of a trigger per inserted or updated row (deletes
    # keep their trigger). Dropping the vec0 table needs sqlite-vec loaded; the driver loads it.
    """
    DROP TRIGGER IF EXISTS chunks_vec_delete;
    DROP TABLE IF EXISTS chunk_vectors;
    DROP TRIGGER IF EXISTS chunks_fts_insert;
    DROP TRIGGER IF EXISTS chunks_fts_update;
    ALTER TABLE vectors ADD COLUMN generation INTEGER NOT NULL DEFAULT 0;
    CREATE INDEX vectors_generation ON vectors(generation);
    CREATE TABLE vector_tombstones (rowid INTEGER PRIMARY KEY, generation INTEGER NOT NULL);
    CREATE INDEX vector_tombstones_generation ON vector_tombstones(generation);
    CREATE TRIGGER vectors_tombstone AFTER DELETE ON vectors BEGIN
        INSERT INTO vector_tombstones(rowid, generation)
        VALUES (old.rowid, (SELECT CAST(value AS INTEGER) FROM meta WHERE key = 'generation'))
        ON CONFLICT(rowid) DO UPDATE SET generation = excluded.generation;
    END;
    INSERT OR REPLACE INTO meta(key, value) VALUES ('generation', '1');
    INSERT OR REPLACE INTO meta(key, value) VALUES ('tombstone_floor', '0');
    INSERT OR REPLACE INTO meta(key, value) VALUES ('store_uuid', lower(hex(randomblob(16))));
    """,
    # 3: vault notes get their own source label (engram.ingest.sources): a markdown chunk labelled
    # "memory" that belongs to no memory folder (no memory_scope) and no collection is a vault
    # note; its document record follows its chunks. Only metadata changes: vectors and the FTS
    # index stay as they are.
    """
    UPDATE chunks SET metadata = json_set(metadata, '$.source', 'vault')
    WHERE json_extract(metadata, '$.source') = 'memory'
      AND json_type(metadata, '$.memory_scope') IS NULL
      AND json_type(metadata, '$.collection') IS NULL;
    UPDATE documents SET metadata = json_set(metadata, '$.source', 'vault')
    WHERE json_extract(metadata, '$.source') = 'memory'
      AND EXISTS (
        SELECT 1 FROM chunks c
        WHERE c.document_id = documents.id AND json_extract(c.metadata, '$.source') = 'vault'
      );
    """,
    # 4: a record's stamp (engram.stamps: source, path, the file's size / mtime_ns / inode when
    # indexed, when that was) in columns of its own, written with the record: a re-index reads
    # every stamp in one plain SELECT instead of parsing 10K JSON records. Existing records are
    # filled from their JSON, typed as ``stamp_of`` types them (anything else stays NULL, which
    # only means "read that file once more").
    f"""
    ALTER TABLE documents ADD COLUMN source TEXT;
    ALTER TABLE documents ADD COLUMN path TEXT;
    ALTER TABLE documents ADD COLUMN size INTEGER;
    ALTER TABLE documents ADD COLUMN mtime_ns INTEGER;
    ALTER TABLE documents ADD COLUMN inode INTEGER;
    ALTER TABLE documents ADD COLUMN indexed_at REAL;
    UPDATE documents SET
        source = {_typed("$.source", "'text'")},
        path = {_typed("$.path", "'text'")},
        size = {_STAT} * {_typed("$.stat[0]", "'integer'")},
        mtime_ns = {_STAT} * {_typed("$.stat[1]", "'integer'")},
        inode = {_STAT} * {_typed("$.stat[2]", "'integer'")},
        indexed_at = {_typed("$.indexed_at", "'integer', 'real'")};
    """,
    # 5: every change to the documents table, by any process or tool, draws a new random
    # meta.documents_token (in the same transaction): the stamp cache (stampcache.py) is trusted
    # only while the token it was derived under is still the file's. Random, not a counter, so
    # a file restored from a backup and written again never comes back to a token seen before.
    """
    INSERT OR REPLACE INTO meta(key, value) VALUES ('documents_token', lower(hex(randomblob(8))));
    CREATE TRIGGER documents_token_insert AFTER INSERT ON documents BEGIN
        UPDATE meta SET value = lower(hex(randomblob(8))) WHERE key = 'documents_token';
    END;
    CREATE TRIGGER documents_token_update AFTER UPDATE ON documents BEGIN
        UPDATE meta SET value = lower(hex(randomblob(8))) WHERE key = 'documents_token';
    END;
    CREATE TRIGGER documents_token_delete AFTER DELETE ON documents BEGIN
        UPDATE meta SET value = lower(hex(randomblob(8))) WHERE key = 'documents_token';
    END;
    """,
    # 6: the file's ctime_ns in the stamp (engram.stamps: an edit whose mtime was put back keeps
    # size, mtime and inode, never the ctime). A record written before kept no ctime: its stat
    # is not a valid one any more (``stat_from`` wants four numbers), so its stamp columns are
    # cleared as ``stamp_of`` reads it, and its file is hashed once and restamped.
    f"""
    ALTER TABLE documents ADD COLUMN ctime_ns INTEGER;
    UPDATE documents SET
        size = {_STAT4} * {_typed("$.stat[0]", "'integer'")},
        mtime_ns = {_STAT4} * {_typed("$.stat[1]", "'integer'")},
        inode = {_STAT4} * {_typed("$.stat[2]", "'integer'")},
        ctime_ns = {_STAT4} * {_typed("$.stat[3]", "'integer'")};
    """,
)
LATEST = len(MIGRATIONS)


def bump_generation(conn: sqlite3.Connection) -> int:
    """Start a new generation (first thing in every write that can change vectors)."""
    row = conn.execute(
        "UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation' "
        "RETURNING CAST(value AS INTEGER)"
    ).fetchone()
    return int(row[0])


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, where: str) -> int:
    """Apply every missing migration (call inside a write transaction); return how many ran."""
    current = schema_version(conn)
    if current > LATEST:
        raise StoreError(
            f"the index {where} has schema version {current}, newer than this engram-sqlite "
            f"understands ({LATEST}); upgrade engram-sqlite, or delete the file and run "
            "`engram rebuild`"
        )
    for version in range(current + 1, LATEST + 1):
        for statement in _statements(MIGRATIONS[version - 1]):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {int(version)}")
    return LATEST - current


def drop_everything(conn: sqlite3.Connection) -> None:
    """Remove every table, index and trigger (call inside a write transaction), for ``reset``."""
    rows = conn.execute(
        "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"
    ).fetchall()
    for kind, name, _ in rows:
        if kind == "trigger":
            conn.execute(f"DROP TRIGGER IF EXISTS {_quote(name)}")
    for kind, name, sql in rows:
        if kind == "table" and str(sql or "").upper().startswith("CREATE VIRTUAL TABLE"):
            conn.execute(f"DROP TABLE IF EXISTS {_quote(name)}")
    for kind, name, _ in rows:
        if kind in ("table", "view"):
            conn.execute(f"DROP {kind.upper()} IF EXISTS {_quote(name)}")
    if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'sqlite_sequence'").fetchone():
        conn.execute("DELETE FROM sqlite_sequence")
    conn.execute("PRAGMA user_version = 0")


def _statements(script: str) -> list[str]:
    """Split a migration into statements; ``sqlite3.complete_statement`` keeps triggers whole."""
    out: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if buffer.strip():
                out.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        out.append(buffer.strip())
    return out


def _quote(name: str) -> str:
    """A schema object name (read from sqlite_master, not user input) as a quoted identifier."""
    return '"' + name.replace('"', '""') + '"'
