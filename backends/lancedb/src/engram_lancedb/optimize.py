"""Table upkeep: compaction, old-version cleanup, index updates, and the ANN index once a table
outgrows exact search.

LanceDB writes a new version (and a small data file) per write. ``optimize`` merges small files,
folds new rows into the full-text and vector indexes, and removes versions older than
``keep_versions_minutes``. The store runs it every ``optimize_every`` writes; ``engram optimize``
runs it on demand.
"""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

from lancedb.index import BTree, HnswSq, IvfPq
from lancedb.table import LanceTable
from pydantic import BaseModel, Field

from engram_lancedb.database import Database
from engram_lancedb.options import LanceDBOptions
from engram_lancedb.records import CHUNKS, DOCUMENTS, META

ID_INDEX_ROWS = 10_000  # from here a B-tree on ``id`` beats scanning the column
VECTOR_INDEX_TYPES = frozenset({"IvfHnswSq", "IvfPq", "IvfHnswPq", "IvfFlat", "IvfSq", "IvfRq"})


class TableReport(BaseModel):
    rows: int
    fragments_before: int
    fragments_after: int
    versions_before: int
    versions_after: int
    bytes_before: int
    bytes_after: int


class OptimizeReport(BaseModel):
    """What one ``optimize()`` did, per table; printed by ``engram optimize``."""

    store: str
    tables: dict[str, TableReport] = Field(default_factory=dict)
    ann_index: str = "no chunks yet"
    seconds: float = 0.0

    def summary(self) -> str:
        parts = [f"optimized the LanceDB store at {self.store} in {self.seconds:.2f}s"]
        for name, t in self.tables.items():
            parts.append(
                f"{name}: {t.rows} rows, {t.fragments_before}→{t.fragments_after} fragments, "
                f"{t.versions_before}→{t.versions_after} versions, "
                f"{t.bytes_before}→{t.bytes_after} bytes"
            )
        parts.append(f"vector index: {self.ann_index}")
        return "; ".join(parts)


def optimize_store(db: Database, options: LanceDBOptions) -> OptimizeReport:
    started = time.perf_counter()
    report = OptimizeReport(store=db.where)
    keep = timedelta(minutes=options.keep_versions_minutes)
    for name in (CHUNKS, DOCUMENTS, META):
        table = db.table(name)
        if table is None:
            continue
        with db.guard(f"optimize table {name}"):
            before = table_stats(table)
            versions_before = len(table.list_versions())
            if name == CHUNKS:
                report.ann_index = ensure_ann_index(table, options)
            table.optimize(cleanup_older_than=keep)
            after = table_stats(table)
            report.tables[name] = TableReport(
                rows=after["rows"],
                fragments_before=before["fragments"],
                fragments_after=after["fragments"],
                versions_before=versions_before,
                versions_after=len(table.list_versions()),
                bytes_before=before["bytes"],
                bytes_after=after["bytes"],
            )
    report.seconds = time.perf_counter() - started
    return report


def table_stats(table: LanceTable) -> dict[str, int]:
    """Rows, fragments and bytes of a table (``stats()`` returns a dict in lancedb 0.40 while
    its annotation says a dataclass; both are read)."""
    raw: Any = table.stats()

    def get(obj: Any, key: str) -> Any:
        return obj[key] if isinstance(obj, dict) else getattr(obj, key)

    return {
        "rows": int(get(raw, "num_rows")),
        "fragments": int(get(get(raw, "fragment_stats"), "num_fragments")),
        "bytes": int(get(raw, "total_bytes")),
    }


def has_vector_index(table: LanceTable) -> bool:
    return any(
        idx.index_type in VECTOR_INDEX_TYPES and "vector" in idx.columns
        for idx in table.list_indices()
    )


def ensure_ann_index(table: LanceTable, options: LanceDBOptions) -> str:
    """Build the ANN index once the table holds ``ann_threshold`` vectors (below that, exact
    search is fast enough, and exact), and a B-tree on ``id`` once lookups and upserts by id
    would otherwise scan a large table."""
    if table.count_rows() >= ID_INDEX_ROWS and not any(
        idx.columns == ["id"] for idx in table.list_indices()
    ):
        table.create_index("id", config=BTree())
    if "vector" not in table.schema.names:
        return "none (no index identity yet)"
    if has_vector_index(table):
        return f"{options.ann_index} present"
    vectors = table.count_rows("state = 1")
    if options.ann_index == "none":
        return f"off (ann_index = none; exact search over {vectors} vectors)"
    if vectors < options.ann_threshold:
        return f"not needed yet: {vectors} vectors, exact search below {options.ann_threshold}"
    dimension = int(table.schema.field("vector").type.list_size)
    config: HnswSq | IvfPq
    if options.ann_index == "ivf_hnsw_sq":
        config = HnswSq(distance_type="cosine")
    else:
        config = IvfPq(distance_type="cosine", num_sub_vectors=_sub_vectors(dimension))
    table.create_index("vector", config=config)
    return f"{options.ann_index} created over {vectors} vectors"


def _sub_vectors(dimension: int) -> int:
    """PQ splits a vector into equal sub-vectors: the largest split of 8+ values that divides."""
    for width in (16, 8):
        if dimension % width == 0 and dimension >= width:
            return dimension // width
    return 1
