"""``LanceDBStore``: the engram Store protocol over LanceDB, in a folder or on object storage.

- Vector search is LanceDB's cosine search with the filter applied *before* the top-k
  (``prefilter``): brute force and exact until ``optimize`` builds an ANN index past
  ``ann_threshold`` vectors, then HNSW/IVF with ``ef`` and ``refine_factor`` (exact re-ranking).
- Keyword search is LanceDB's native BM25 full-text index over pre-tokenized terms.
- Upserts are one ``merge_insert`` on ``id`` per call: all or nothing.
- Filters become where-clauses over typed filter columns (see ``filters.py``).
- The searches themselves (vector, zero-similarity rows, BM25) are in ``queries.py``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import pyarrow as pa  # type: ignore[import-untyped]
from lancedb.expr import col
from lancedb.table import LanceTable

from engram import (
    Chunk,
    ClosingStore,
    Document,
    Filter,
    Hit,
    IndexIdentity,
    StoreCapability,
    StoreError,
    check_finite,
    check_identity,
)
from engram_lancedb.database import Database
from engram_lancedb.filters import compile_filter
from engram_lancedb.keyword import fts_config, query_terms
from engram_lancedb.meta import check_format, read_meta, write_meta
from engram_lancedb.optimize import OptimizeReport, optimize_store, table_stats
from engram_lancedb.options import LanceDBOptions
from engram_lancedb.queries import keyword_hits, nearest, read_columns, zero_hits
from engram_lancedb.records import (
    CHUNKS,
    DOCUMENTS,
    FORMAT,
    META,
    chunk_rows,
    chunk_schema,
    dimension_of,
    document_rows,
    to_chunks,
    to_documents,
)
from engram_lancedb.vectors import Encoded, encode, query_vector

log = logging.getLogger("engram_lancedb")
ID_BATCH = 500  # ids per IN-list


class LanceDBStore(ClosingStore):
    """Chunks, document records and the index identity in three LanceDB tables."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset(
        {"vector", "keyword", "filter", "persistent"}
    )

    def __init__(self, options: LanceDBOptions | None = None) -> None:
        self.options = options if options is not None else LanceDBOptions()
        # On object storage many machines write one table: core keeps their origins apart.
        self.shared = self.options.remote
        self._lock = threading.RLock()
        self._db = Database(self.options)
        self._identity: tuple[float, IndexIdentity | None] | None = None
        self._writes = 0
        self._rows_written = 0
        self._rows_at_optimize = 0  # table rows after the last optimize this handle ran
        self._keyword_index_checked = False  # once per chunks table this process opens
        check_format(self._db)

    # -- plumbing -----------------------------------------------------------------------------

    @contextmanager
    def _op(self, action: str) -> Iterator[None]:
        """One operation: atomic within the process, and any LanceDB or object-store failure
        inside becomes a ``StoreError`` saying what could not be done."""
        with self._lock, self._db.guard(action):
            yield

    def diagnostics(self) -> dict[str, Any]:
        """What ``engram doctor`` shows: where the store is, what the chunks table holds, its
        indexes, and how many small files and versions wait for ``optimize``."""
        out: dict[str, Any] = {"where": self._db.where, "format": FORMAT, "chunks": 0}
        with self._op("be inspected"):
            table = self._db.table(CHUNKS)
            if table is None:
                return out
            out.update(table_stats(table))
            out["chunks"] = out.pop("rows")
            out["indexes"] = sorted(i.index_type for i in table.list_indices())
            out["versions"] = len(table.list_versions())
        return out

    def close(self) -> None:
        with self._lock:
            self._db.forget()

    # -- identity -----------------------------------------------------------------------------

    def get_identity(self) -> IndexIdentity | None:
        with self._op("read the index identity"):
            return self._load_identity()

    def set_identity(self, identity: IndexIdentity) -> None:
        """Record ``identity`` on first use; a different one later is an ``IdentityMismatch``."""
        check_identity(None, identity)  # the type, before LanceDB is touched
        with self._op("record the index identity"):
            if not check_identity(self._load_identity(fresh=True), identity):
                return
            self._vector_columns(identity.dimension)
            write_meta(self._db, {"identity": identity.model_dump_json(), "format": FORMAT})
            self._identity = (time.monotonic(), identity)

    def _load_identity(self, *, fresh: bool = False) -> IndexIdentity | None:
        interval = self.options.read_consistency_seconds
        cached = self._identity
        if cached is not None and not fresh:
            age = time.monotonic() - cached[0]
            if interval is None or age < interval:
                return cached[1]
        raw = read_meta(self._db).get("identity")
        identity = IndexIdentity.model_validate_json(raw) if raw else None
        self._identity = (time.monotonic(), identity)
        return identity

    # -- chunks -------------------------------------------------------------------------------

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Insert or overwrite chunks by id in one commit; everything is checked first."""
        latest: dict[str, Chunk] = {}
        for chunk in chunks:
            if not isinstance(chunk, Chunk):
                raise StoreError(
                    f"upsert expects engram.Chunk objects, got {type(chunk).__name__}; "
                    f"build them with Chunk(id=..., document_id=..., text=...)"
                )
            latest.pop(chunk.id, None)
            latest[chunk.id] = chunk  # the last copy of an id wins, as in sequential upserts
        if not latest:
            return
        batch = list(latest.values())
        with self._op("write chunks"):
            identity = self._load_identity()
            encoded = [_encode(c, identity) for c in batch]
            table = self._chunks_table(identity.dimension if identity else None)
            dimension = dimension_of(table.schema)
            if identity is not None and dimension != identity.dimension:
                self._vector_columns(identity.dimension)  # set by another process meanwhile
                table, dimension = self._chunks_table(identity.dimension), identity.dimension
            rows = chunk_rows(batch, encoded, dimension)
            with self._db.guard(f"write {len(batch)} chunks"):
                (
                    table.merge_insert("id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(rows, on_bad_vectors="null")
                )
            self._wrote(len(batch))

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        wanted = list(ids)
        with self._op("read chunks"):
            table = self._db.table(CHUNKS)
            if table is None or not wanted:
                return []
            found: dict[str, Chunk] = {}
            for start in range(0, len(wanted), ID_BATCH):
                part = sorted(set(wanted[start : start + ID_BATCH]))
                with self._db.guard("read chunks"):
                    rows = (
                        table.search()
                        .where(col("id").isin(part))
                        .select(read_columns(table))
                        .to_arrow()
                    )
                found.update((c.id, c) for c in to_chunks(rows))
        return [found[i] for i in wanted if i in found]

    def delete(self, ids: Sequence[str]) -> None:
        self._delete_by("id", CHUNKS, list(ids))

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Chunks first, then the records: a crash in between leaves a record whose chunks are
        gone, which the next sync repairs (the reverse would strand chunks)."""
        wanted = list(document_ids)
        with self._op("delete documents"):
            self._delete_by("document_id", CHUNKS, wanted)
            self._delete_by("id", DOCUMENTS, wanted)

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None:
        """Every chunk of ``document_id`` not in ``keep`` goes (found by its document id)."""
        with self._op("delete chunks"):
            table = self._db.table(CHUNKS)
            if table is None:
                return
            with self._db.guard("read chunks"):
                rows = (
                    table.search()
                    .where(col("document_id") == document_id)
                    .select(["id"])
                    .to_arrow()
                )
            kept = set(keep)
            stale = [i for i in rows.column("id").to_pylist() if i not in kept]
        self._delete_by("id", CHUNKS, stale)

    def delete_where(self, filter: Filter) -> None:
        where = compile_filter(filter)
        with self._op("delete chunks"):
            table = self._db.table(CHUNKS)
            if table is None or where is None:
                return
            with self._db.guard("delete chunks"):
                table.delete(where)
            self._wrote()

    def count(self, filter: Filter | None = None) -> int:
        where = compile_filter(filter)
        with self._op("count chunks"):
            table = self._db.table(CHUNKS)
            if table is None:
                return 0
            with self._db.guard("count chunks"):
                return int(table.count_rows(where))

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        """Every chunk, vectors included, in lists of at most ``batch_size`` (one snapshot)."""
        if batch_size < 1:
            raise StoreError(f"batch_size must be at least 1 (got {batch_size})")
        with self._op("read chunks"):
            table = self._db.table(CHUNKS)
            if table is None:
                return iter(())
            with self._db.guard("read chunks"):
                reader = table.search().select(read_columns(table)).to_batches(batch_size)
        return self._batches(reader, batch_size)

    def _batches(self, reader: Any, batch_size: int) -> Iterator[list[Chunk]]:
        pending: list[Chunk] = []
        with self._db.guard("read chunks"):
            for batch in reader:
                pending.extend(to_chunks(pa.Table.from_batches([batch])))
                while len(pending) >= batch_size:
                    yield pending[:batch_size]
                    pending = pending[batch_size:]
        if pending:
            yield pending

    # -- documents ----------------------------------------------------------------------------

    def put_document(self, document: Document) -> None:
        rows = document_rows([document])
        with self._op("record a document"):
            table = self._db.table(DOCUMENTS)
            if table is None:  # the first record creates the table (one commit, not two)
                self._db.create(DOCUMENTS, rows.schema, rows)
                self._wrote()
                return
            with self._db.guard(f"record document {document.id!r}"):
                (
                    table.merge_insert("id")
                    .when_matched_update_all()
                    .when_not_matched_insert_all()
                    .execute(rows)
                )
            self._wrote()

    def list_documents(self) -> dict[str, Document]:
        with self._op("read document records"):
            table = self._db.table(DOCUMENTS)
            if table is None:
                return {}
            with self._db.guard("read document records"):
                rows = table.to_arrow()
        return to_documents(rows)

    # -- search -------------------------------------------------------------------------------

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None, *, exact: bool = False
    ) -> list[Hit]:
        """The ``k`` chunks most cosine-similar to ``vector`` among those ``filter`` keeps.
        ``exact`` skips the ANN index (brute force), to measure its recall."""
        _check_k(k)
        where = compile_filter(filter)
        with self._op("search vectors"):
            identity = self._load_identity()
            if identity is None:
                check_finite(vector, "the query vector")
                return []
            query = query_vector(vector, identity)
            table = self._db.table(CHUNKS)
            if k == 0 or table is None or dimension_of(table.schema) is None:
                return []
            if query is None:  # a zero query is equally (un)like every vector
                scored = zero_hits(self._db, table, "state != 0", where, k)
            else:
                scored = nearest(self._db, table, query.tolist(), where, k, exact, self.options)
                if len(scored) < k or min(hit.score for hit in scored) <= 0.0:
                    # zero vectors score 0: they only matter when they would make the top k
                    scored += zero_hits(self._db, table, "state = 2", where, k)
        scored.sort(key=lambda hit: (-hit.score, hit.chunk.id))
        return scored[:k]

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """BM25 over the chunk text: any of the query's words matches (OR), more is better."""
        _check_k(k)
        where = compile_filter(filter)
        terms = query_terms(query)
        if not terms or k == 0:
            return []
        with self._op("search keywords"):
            table = self._db.table(CHUNKS)
            if table is None:
                return []
            self._ensure_keyword_index(table)
            hits = keyword_hits(self._db, table, terms, where, k)
        hits.sort(key=lambda hit: (-hit.score, hit.chunk.id))
        return hits

    # -- lifecycle ----------------------------------------------------------------------------

    def reset(self) -> None:
        """Drop every table: chunks, documents, identity. The store is as new."""
        with self._op("be reset"):
            self._db.refresh()
            for name in (CHUNKS, DOCUMENTS, META):
                self._db.drop(name)
            self._keyword_index_checked = False
            self._identity = (time.monotonic(), None)
            self._writes = self._rows_written = self._rows_at_optimize = 0

    def optimize(self) -> OptimizeReport:
        """Compact small files, fold new rows into the indexes, drop old versions, and build the
        ANN index once the table has outgrown exact search (``engram optimize``)."""
        with self._op("be optimized"):
            self._writes = self._rows_written = 0
            report = optimize_store(self._db, self.options)
            chunks = report.tables.get(CHUNKS)
            self._rows_at_optimize = chunks.rows if chunks is not None else 0
            return report

    # -- internals ----------------------------------------------------------------------------

    def _wrote(self, rows: int = 1) -> None:
        """Count a write of ``rows`` rows; every ``optimize_every`` writes, or once the rows
        written reach ``optimize_rows`` (or ``optimize_growth`` of the table, when larger),
        optimize (failures only logged: the write itself succeeded, and the next run retries)."""
        self._writes += 1
        self._rows_written += rows
        every, many = self.options.optimize_every, self.options.optimize_rows
        if many:
            many = max(many, int(self.options.optimize_growth * self._rows_at_optimize))
        if (every and self._writes >= every) or (many and self._rows_written >= many):
            try:
                self.optimize()
            except StoreError as exc:
                log.warning("automatic optimize failed (will retry later): %s", exc)

    def _delete_by(self, column: str, name: str, values: list[str]) -> None:
        if not values:
            return
        with self._op("delete rows"):
            table = self._db.table(name)
            if table is None:
                return
            for start in range(0, len(values), ID_BATCH):
                part = sorted(set(values[start : start + ID_BATCH]))
                with self._db.guard(f"delete from {name}"):
                    table.delete(col(column).isin(part))
            self._wrote(len(values))

    def _chunks_table(self, dimension: int | None) -> LanceTable:
        """The chunks table, created on first use, with its keyword index (checked once per
        handle, so an index lost to a failed first run is built again)."""
        table = self._db.table(CHUNKS)
        if table is None:
            table = self._db.create(CHUNKS, chunk_schema(dimension))
        self._ensure_keyword_index(table)
        return table

    def _ensure_keyword_index(self, table: LanceTable) -> None:
        if self._keyword_index_checked:
            return
        with self._db.guard("create the keyword index"):
            if not any(idx.columns == ["terms"] for idx in table.list_indices()):
                config = fts_config(self.options.fts_language, self.options.fts_stem)
                table.create_index("terms", config=config)
        self._keyword_index_checked = True

    def _vector_columns(self, dimension: int) -> None:
        """Make the chunks table hold ``dimension``-long vectors (it may have been created for
        vector-less chunks before the identity was known)."""
        table = self._db.table(CHUNKS)
        if table is None:
            self._chunks_table(dimension)
            return
        current = dimension_of(table.schema)
        if current == dimension:
            return
        with self._db.guard("change the vector dimension"):
            vectors = table.count_rows("state != 0") if current is not None else 0
            if vectors:
                raise StoreError(
                    f"the chunks table holds {vectors} vectors of {current} dimensions but no "
                    f"index identity; run `engram rebuild` to recreate the store"
                )
            plain = [f.name for f in chunk_schema(None)]
            keep = table.search().select(plain).to_arrow()
        self._db.drop(CHUNKS)
        self._keyword_index_checked = False
        table = self._chunks_table(dimension)
        if keep.num_rows:
            with self._db.guard("rewrite the chunks table"):
                table.add(keep)


def _encode(chunk: Chunk, identity: IndexIdentity | None) -> Encoded | None:
    if chunk.vector is None:
        return None
    if identity is None:
        raise StoreError(
            f"chunk {chunk.id!r} has a vector but the store has no index identity yet; call "
            "set_identity(IndexIdentity(...)) before upserting vectors (or upsert with vector=None "
            "for keyword-only chunks)"
        )
    return encode(chunk.vector, identity, f"the vector of chunk {chunk.id!r}")


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more (got {k})")
