"""The example store runs engram's conformance suite: copy this file to test your own backend."""

from collections.abc import Iterator

import pytest
from engram_example_store import ExampleOptions, ExampleStore

from engram.testing import StoreSuite


class TestExampleStore(StoreSuite):
    @pytest.fixture
    def store(self) -> Iterator[ExampleStore]:
        store = ExampleStore(ExampleOptions(label="conformance"))  # a fresh, empty store per test
        yield store
        store.close()
