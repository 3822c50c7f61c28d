"""The search policy's pool sizes: every search that widens (recency, one hit per document,
a collection's vector search) tries the same bounded sequence."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given
from hypothesis import strategies as st

from engram.memories.policy import MAX_POOL, pools


@given(st.integers(min_value=1, max_value=5 * MAX_POOL))
def test_pools_grow_fourfold_from_the_first_and_stop_at_the_cap(first: int) -> None:
    sizes = list(pools(first))
    assert sizes[0] == min(first, MAX_POOL)
    assert sizes[-1] == MAX_POOL
    assert all(a < b <= 4 * a for a, b in pairwise(sizes))
    assert all(b == 4 * a for a, b in pairwise(sizes[:-1]))
