"""The ``engram_meta`` table: the index identity and the store's format version, as key/value
rows (small, read on open and whenever the identity may have changed)."""

from __future__ import annotations

import pyarrow as pa  # type: ignore[import-untyped]

from engram import StoreError
from engram_lancedb.database import Database
from engram_lancedb.records import FORMAT, META, META_SCHEMA


def read_meta(db: Database) -> dict[str, str]:
    table = db.table(META)
    if table is None:
        return {}
    with db.guard("read the index identity"):
        data = table.to_arrow().to_pydict()
    return dict(zip(data["key"], data["value"], strict=True))


def write_meta(db: Database, values: dict[str, str]) -> None:
    rows = pa.table({"key": list(values), "value": list(values.values())}, schema=META_SCHEMA)
    table = db.table(META)
    if table is None:
        db.create(META, META_SCHEMA, rows, key="key")
        return
    merge = table.merge_insert("key").when_matched_update_all().when_not_matched_insert_all()
    with db.guard("record the index identity"):
        merge.execute(rows)


def check_format(db: Database) -> None:
    """Refuse a store written in a format this version does not read."""
    found = read_meta(db).get("format")
    if found is not None and found != FORMAT:
        raise StoreError(
            f"the LanceDB store at {db.where} has format {found}, this engram-lancedb reads "
            f"format {FORMAT}; upgrade engram-lancedb, or run `engram rebuild`"
        )
