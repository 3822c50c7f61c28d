"""Length-sorted batching: every text exactly once, bounded batches, little padding."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engram_local.batching import pad, plan_batches

lengths_st = st.lists(st.integers(min_value=1, max_value=300), max_size=200)


@given(lengths=lengths_st, size=st.integers(1, 64), budget=st.integers(1, 5000))
def test_every_index_once_and_batches_bounded(lengths: list[int], size: int, budget: int) -> None:
    batches = plan_batches(lengths, size, max_tokens=budget)
    flat = [i for b in batches for i in b]
    assert sorted(flat) == list(range(len(lengths)))
    for batch in batches:
        assert 1 <= len(batch) <= size
        longest = max(lengths[i] for i in batch)
        assert len(batch) == 1 or len(batch) * longest <= budget
        assert all(2 * lengths[i] >= longest for i in batch)


@given(lengths=lengths_st, size=st.integers(1, 64))
def test_longest_first_so_batches_hold_similar_lengths(lengths: list[int], size: int) -> None:
    flat = [lengths[i] for b in plan_batches(lengths, size) for i in b]
    assert flat == sorted(lengths, reverse=True)


def test_pad_right_pads_with_zeros_and_masks() -> None:
    ids, mask = pad([[101, 7, 102], [101, 102]])
    assert ids.tolist() == [[101, 7, 102], [101, 102, 0]]
    assert mask.tolist() == [[1, 1, 1], [1, 1, 0]]
