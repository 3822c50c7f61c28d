"""The searches ``LanceDBStore`` runs on its chunks table, inside its lock: vector search (the
filter applied before the top-k; the ANN index or exact), the rows whose similarity is 0 by
definition, and BM25 over the pre-tokenized terms. Each returns hits, higher scores better.
"""

from __future__ import annotations

from lancedb.query import FullTextOperator, MatchQuery
from lancedb.table import LanceTable

from engram import Chunk, Hit
from engram_lancedb.database import Database
from engram_lancedb.options import LanceDBOptions
from engram_lancedb.records import READ_COLUMNS, VECTOR_COLUMNS, to_chunks


def read_columns(table: LanceTable) -> list[str]:
    """The columns a chunk is read from: the vector columns only once the table has them."""
    names = table.schema.names
    return READ_COLUMNS + [c for c in VECTOR_COLUMNS if c in names]


def nearest(
    db: Database,
    table: LanceTable,
    query: list[float],
    where: str | None,
    k: int,
    exact: bool,
    options: LanceDBOptions,
) -> list[Hit]:
    """The ``k`` nearest (cosine) chunks that ``where`` keeps; ``exact`` skips the ANN index."""
    o = options
    search = table.search(query, query_type="vector", vector_column_name="vector")
    search = search.distance_type("cosine").ef(max(o.ann_ef, k))
    # at least ann_nprobes partitions; more (up to all) when a filter leaves too few hits
    search = search.minimum_nprobes(o.ann_nprobes).maximum_nprobes(0)
    search = search.refine_factor(o.ann_refine_factor)
    if exact:
        search = search.bypass_vector_index()
    if where is not None:
        search = search.where(where, prefilter=True)
    with db.guard("search vectors"):
        rows = search.limit(k).select([*read_columns(table), "_distance"]).to_arrow()
    distances = rows.column("_distance").to_pylist()
    return [
        _hit(chunk, min(1.0, max(-1.0, 1.0 - float(d))), vector=True)
        for chunk, d in zip(to_chunks(rows), distances, strict=True)
    ]


def zero_hits(db: Database, table: LanceTable, state: str, where: str | None, k: int) -> list[Hit]:
    """Up to k chunks whose similarity is 0 by definition (zero vectors, or every vector
    for a zero query)."""
    clause = state if where is None else f"{state} AND ({where})"
    with db.guard("search vectors"):
        rows = table.search().where(clause).limit(k).select(read_columns(table)).to_arrow()
    return [_hit(chunk, 0.0, vector=True) for chunk in to_chunks(rows)]


def keyword_hits(
    db: Database, table: LanceTable, terms: list[str], where: str | None, k: int
) -> list[Hit]:
    """BM25 over the ``terms`` column: any of ``terms`` matches (OR), more is better."""
    match = MatchQuery(
        " ".join(terms),
        "terms",
        boost=1.0,
        fuzziness=0,
        max_expansions=50,
        operator=FullTextOperator.OR,
        prefix_length=0,
        document_granularity=None,
    )
    search = table.search(match, query_type="fts")
    if where is not None:
        search = search.where(where, prefilter=True)
    with db.guard("search keywords"):
        rows = search.limit(k).select([*read_columns(table), "_score"]).to_arrow()
    scores = rows.column("_score").to_pylist()
    return [
        _hit(chunk, float(s), vector=False)
        for chunk, s in zip(to_chunks(rows), scores, strict=True)
    ]


def _hit(chunk: Chunk, score: float, *, vector: bool) -> Hit:
    if vector:
        return Hit(chunk=chunk, score=score, vector_score=score)
    return Hit(chunk=chunk, score=score, keyword_score=score)
