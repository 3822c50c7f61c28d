"""Group texts of similar length so each forward pass pads as little as possible."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

# Padded tokens per forward pass: bounds the memory a batch of long texts takes.
MAX_BATCH_TOKENS = 4096


def plan_batches(
    lengths: Sequence[int], batch_size: int, max_tokens: int = MAX_BATCH_TOKENS
) -> list[list[int]]:
    """Indices of ``lengths`` in batches, longest texts first (so the slowest batch starts first).

    A batch holds at most ``batch_size`` texts and, padded to its longest text, at most
    ``max_tokens`` tokens (a single text longer than that still gets a batch of its own). A text
    shorter than half the batch's longest starts a new batch, so padding never doubles a text.
    """
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        longest = lengths[current[0]] if current else lengths[i]
        if current and (
            len(current) >= batch_size
            or (len(current) + 1) * longest > max_tokens
            or 2 * lengths[i] < longest
        ):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches


def pad(sequences: Sequence[Sequence[int]]) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """Token ids padded with 0 to the longest sequence, and the matching attention mask."""
    width = max((len(s) for s in sequences), default=0)
    ids = np.zeros((len(sequences), width), dtype=np.int64)
    mask = np.zeros((len(sequences), width), dtype=np.int64)
    for row, seq in enumerate(sequences):
        ids[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return ids, mask
