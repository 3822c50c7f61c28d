"""``Chunk.vector`` takes a float32 numpy array as it is (ingest skips the round trip through
Python floats) and still serialises, validates and compares as the list of the same numbers."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from pydantic import ValidationError

from engram.default_plugins.memory_store import MemoryStore
from engram.models import Chunk, IndexIdentity

finite32 = hnp.arrays(
    np.float32,
    st.integers(1, 16),
    elements=st.floats(-1e6, 1e6, allow_nan=False, width=32),
)


@given(finite32)
def test_an_array_serialises_and_compares_as_its_list(values: np.ndarray) -> None:
    as_array = Chunk(id="a", document_id="d", text="t", vector=values)
    as_list = Chunk(id="a", document_id="d", text="t", vector=values.tolist())
    assert isinstance(as_array.vector, np.ndarray) and as_array.vector.dtype == np.float32
    assert as_array.model_dump() == as_list.model_dump()
    assert as_array.model_dump_json() == as_list.model_dump_json()
    assert Chunk.model_validate_json(as_array.model_dump_json()) == as_array
    assert as_array == as_list and as_list == as_array
    assert as_array != as_list.model_copy(update={"text": "other"})


def test_the_kept_array_is_a_read_only_copy() -> None:
    values = np.ones(4, dtype=np.float32)
    chunk = Chunk(id="a", document_id="d", text="t", vector=values)
    values[0] = 9.0
    assert chunk.vector is not None and chunk.vector[0] == 1.0
    with pytest.raises(ValueError, match="read-only"):
        chunk.vector[0] = 5.0  # type: ignore[index]


def test_other_arrays_become_lists_and_bad_ones_are_refused() -> None:
    wide = Chunk(id="a", document_id="d", text="t", vector=np.array([0.1, 0.2]))
    assert wide.vector == [0.1, 0.2]  # float64 kept exactly, as a list would be
    with pytest.raises(ValidationError):
        Chunk(id="a", document_id="d", text="t", vector=np.ones((2, 2), dtype=np.float32))
    with pytest.raises(ValidationError):
        Chunk(id="a", document_id="d", text="t", vector="not numbers")
    assert Chunk.model_json_schema()["properties"]["vector"]["anyOf"][0]["type"] == "array"


def test_a_store_takes_array_vectors_like_lists() -> None:
    store = MemoryStore()
    store.set_identity(IndexIdentity(embedder="e", model="m", dimension=3, chunker="c"))
    store.upsert(
        [
            Chunk(id="x", document_id="d", text="t", vector=np.array([1, 0, 0], np.float32)),
            Chunk(id="y", document_id="d", text="t", vector=[0.0, 1.0, 0.0]),
        ]
    )
    assert [h.chunk.id for h in store.vector_search([0.9, 0.1, 0.0], 2)] == ["x", "y"]
