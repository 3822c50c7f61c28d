"""What a search ranks inside one read transaction: the k best rows of the side matrix for a
query vector, the SQL of a keyword ranking and its rows, and both halves of a hybrid search, as
candidates named by rowid (their chunk ids read only if fusion asks)."""

from __future__ import annotations

import math
import sqlite3
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

from engram import Candidates, Filter, Keys, NameKeys, Scores
from engram_sqlite.filters import compile_filter
from engram_sqlite.fts import match_expression, match_phrases
from engram_sqlite.matrix import SideMatrix, View
from engram_sqlite.search_rows import SearchMeta
from engram_sqlite.sidefile import Matrix, Rowids
from engram_sqlite.vectors import unit_query

Scored = tuple[Rowids, npt.NDArray[np.float64]]  # rowids and their scores, best first
NOTHING: Scored = (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.float64))


class VectorTop(NamedTuple):
    """A vector ranking and what scored it: the view and the unit query (None without an
    identity, so no vectors), and the scan's score of every snapshot record (``View.top_k``)."""

    scored: Scored
    view: View | None = None
    query: Matrix | None = None
    scanned: Matrix | None = None

    def cosines(self, keys: Keys) -> Scores | None:
        """The cosines of more rows with this query; None when there was nothing to scan."""
        if self.view is None or self.query is None:
            return None
        return self.view.scores_for(keys, self.query, self.scanned)


def vector_top(
    conn: sqlite3.Connection,
    meta: SearchMeta,
    matrix: SideMatrix,
    given: npt.NDArray[np.float64],
    k: int,
    where: str,
    params: Any,
) -> VectorTop:
    """The k best rows of the transaction ``conn`` is in (only rows matching the compiled
    filter ``where``), by cosine with the query vector ``given``."""
    identity, state = meta(conn)
    if identity is None:
        return VectorTop(NOTHING)
    query = unit_query(given, identity)
    view = matrix.view(conn, identity.dimension, state)
    allowed = None
    if where != "1":
        rows = conn.execute(
            f"SELECT c.rowid FROM chunks c WHERE c.vector_state != 0 AND {where} ORDER BY c.rowid",
            params,
        ).fetchall()
        allowed = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    best, scanned = view.top_k(query, k, allowed)
    return VectorTop(best, view, query, scanned)


def both_in_one_read(
    conn: sqlite3.Connection,
    meta: SearchMeta,
    matrix: SideMatrix,
    given: npt.NDArray[np.float64],
    ranked: tuple[str, list[Any]],
    k: int,
    where: str,
    params: Any,
    name: NameKeys,
) -> tuple[Candidates, Candidates]:
    """The vector and keyword candidates of a hybrid search, one after the other in the read
    transaction ``conn`` is in, by rowid (``name`` reads their ids if fusion asks). The keyword
    candidates carry their cosines (``Candidates.cosines``) from the scan just made."""
    top = vector_top(conn, meta, matrix, given, k, where, params)
    keyword_side = candidates_of(ranked_rows(conn, ranked), name)
    return candidates_of(top.scored, name), with_cosines(keyword_side, top)


def with_cosines(keyword_side: Candidates, top: VectorTop) -> Candidates:
    """Keyword candidates with their cosines from the vector half's scan, when it had one."""
    cosines = top.cosines(keyword_side.keys) if len(keyword_side) else None
    return keyword_side if cosines is None else keyword_side.with_cosines(cosines)


def keyword_ranking(query: str, k: int, filter: Filter | None) -> tuple[str, list[Any]] | None:
    """The SQL ranking the top ``k`` rowids by BM25, with its parameters (None: no words)."""
    where, params = compile_filter(filter)
    expression = match_expression(query)
    if expression is None or k == 0:
        return None
    # Rank rowids first and fetch the rows of the top k only: joined before the sort, every
    # matching chunk's text and vector would be read and carried through the sorter.
    if where == "1":
        ranked = (
            "SELECT rowid, -bm25(chunks_fts) AS score FROM chunks_fts "
            "WHERE chunks_fts MATCH ? ORDER BY score DESC, rowid LIMIT ?"
        )
    else:
        ranked = (
            "SELECT c.rowid AS rowid, -bm25(chunks_fts) AS score "
            "FROM chunks_fts JOIN chunks c ON c.rowid = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ? AND {where} ORDER BY score DESC, c.rowid LIMIT ?"
        )
    return ranked, [expression, *params, k]


def ranked_rows(conn: sqlite3.Connection, ranked: tuple[str, list[Any]]) -> Scored:
    """The rowids and BM25 relevances of a keyword ranking (``keyword_ranking``)."""
    rows = conn.execute(ranked[0], ranked[1]).fetchall()
    return (
        np.array([r[0] for r in rows], dtype=np.int64),
        np.array([r[1] for r in rows], dtype=np.float64),
    )


def candidates_of(scored: Scored, name: NameKeys) -> Candidates:
    """Ranked rowids and scores as candidates whose ids ``name`` reads when asked for."""
    return Candidates.by_key(scored[0], scored[1], name)


def keyword_ceiling(conn: sqlite3.Connection, query: str) -> float | None:
    """The BM25 score a chunk of average length holding each of ``query``'s words once would
    get (``engram.KeywordCeiling``): the sum of FTS5's ``bm25()`` idf over the query's phrases,
    repeats included, ``log((N - n + 0.5) / (n + 0.5))`` floored at 1e-6 as FTS5 floors it, for
    the ``n`` chunks of ``N`` holding the phrase. Phrases no chunk holds add nothing; None when
    none is held. Each count reads the phrase's posting list, as ranking it already does."""
    phrases = match_phrases(query)
    if not phrases:
        return None
    total = int(conn.execute("SELECT count(*) FROM chunks_fts_docsize").fetchone()[0])
    held: dict[str, int] = {}
    ceiling = 0.0
    for phrase in phrases:
        n = held.get(phrase)
        if n is None:
            n = held[phrase] = int(
                conn.execute(
                    "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?", (phrase,)
                ).fetchone()[0]
            )
        if n:
            ceiling += max(1e-6, math.log((total - n + 0.5) / (n + 0.5)))
    return ceiling if any(held.values()) else None
