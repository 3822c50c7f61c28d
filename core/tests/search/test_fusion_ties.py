"""A fused ranking orders equal scores by chunk id, reading the ids only when a tie reaches the
hits a search returns: ``head`` and ``hits`` give what sorting every entry by (-score, id)
gives, for any scores, cut-offs and chunks gone missing."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from engram.models import Chunk
from engram.search.ranked import Fused, ranked_fused

SCORES = [0.0, 0.25, 0.5, 0.75]  # few values: ties everywhere

entries = st.lists(
    st.tuples(
        st.text("abcdef", min_size=1, max_size=3),
        st.sampled_from(SCORES),
        st.one_of(st.just(math.nan), st.sampled_from([0.1, 0.3, 0.6])),
    ),
    max_size=24,
    unique_by=lambda e: e[0],
)


def build(rows: list[tuple[str, float, float]], reads: list[int]) -> Fused:
    ids = [cid for cid, _, _ in rows]

    def names() -> list[str]:
        reads.append(1)
        return list(ids)

    return ranked_fused(
        names,
        np.arange(len(rows), dtype=np.int64),
        np.asarray([s for _, s, _ in rows], dtype=np.float64),
        np.asarray([v for _, _, v in rows], dtype=np.float64),
        np.full(len(rows), np.nan),
    )


def reference(
    rows: list[tuple[str, float, float]], limit: int, min_score: float | None, or_cosine: bool
) -> list[str]:
    ranked = sorted(rows, key=lambda e: (-e[1], e[0]))
    if min_score is not None:
        ranked = [e for e in ranked if e[1] >= min_score or (or_cosine and e[2] >= min_score)]
    return [cid for cid, _, _ in ranked[:limit]]


@settings(max_examples=300, deadline=None)
@given(
    rows=entries,
    limit=st.integers(1, 30),
    min_score=st.sampled_from([None, 0.2, 0.4, 0.6]),
    or_cosine=st.booleans(),
)
def test_head_ranks_ties_by_id(
    rows: list[tuple[str, float, float]], limit: int, min_score: float | None, or_cosine: bool
) -> None:
    reads: list[int] = []
    head = build(rows, reads).head(limit, min_score, or_cosine=or_cosine)
    want = reference(rows, limit, min_score, or_cosine)
    by_key = [rows[k][0] for k in head.keys.tolist()]
    assert by_key == want
    assert head.ids == want
    # Built in the head's key order, the chunks pair with its entries.
    chunks = [Chunk(id=cid, document_id="d", text=cid) for cid in by_key]
    assert [h.chunk.id for h in head.hits(chunks)] == want


@settings(max_examples=200, deadline=None)
@given(rows=entries, gone=st.sets(st.integers(0, 23)))
def test_hits_rank_every_tie_by_id_and_skip_chunks_gone(
    rows: list[tuple[str, float, float]], gone: set[int]
) -> None:
    fused = build(rows, [])
    # Chunks as a store builds them for the keys as ranked before ties were ordered.
    chunks = [
        Chunk(id=rows[k][0], document_id="d", text="t")
        for k in fused.keys.tolist()
        if k not in gone
    ]
    want = reference(rows, len(rows), None, False)
    kept = {rows[k][0] for k in range(len(rows)) if k not in gone}
    assert [h.chunk.id for h in fused.hits(chunks)] == [cid for cid in want if cid in kept]


@given(scores=st.lists(st.floats(0.0, 1.0), max_size=30, unique=True), limit=st.integers(1, 40))
def test_distinct_scores_never_read_the_ids(scores: list[float], limit: int) -> None:
    rows = [(f"c{i}", s, math.nan) for i, s in enumerate(scores)]
    reads: list[int] = []
    head = build(rows, reads).head(limit)
    assert head.scores.tolist() == sorted(scores, reverse=True)[:limit]
    assert reads == []


def test_a_tie_past_the_head_is_not_read() -> None:
    rows = [("z", 0.9, math.nan), ("b", 0.1, math.nan), ("a", 0.1, math.nan)]
    reads: list[int] = []
    head = build(rows, reads).head(1)
    assert head.keys.tolist() == [0] and reads == []
    assert build(rows, reads).head(2).ids == ["z", "a"] and reads == [1]
