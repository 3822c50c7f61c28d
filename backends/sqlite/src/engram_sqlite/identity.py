"""The index identity (embedder, model, dimension, chunker), kept in ``meta``."""

from __future__ import annotations

import sqlite3
from functools import lru_cache

from engram import IndexIdentity, check_identity

KEY = "identity"


def load(conn: sqlite3.Connection) -> IndexIdentity | None:
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (KEY,)).fetchone()
    return None if row is None else parse(row[0])


@lru_cache(maxsize=16)
def parse(raw: str) -> IndexIdentity:
    """Every search reads the identity; the same JSON is parsed once (the record is frozen)."""
    return IndexIdentity.model_validate_json(raw)


def record(conn: sqlite3.Connection, identity: IndexIdentity) -> None:
    """Store ``identity`` on first use; raise if a different one is already recorded."""
    if check_identity(load(conn), identity, holder="this index"):
        conn.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?)", (KEY, identity.model_dump_json())
        )
