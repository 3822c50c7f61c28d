"""The shared store conformance suite (state machine included) against a real PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engram import Store
from engram.testing import OriginViewSuite, StoreSuite
from engram_postgres import PostgresOptions
from engram_postgres.store import PostgresStore


class TestPostgresConformance(StoreSuite):
    @pytest.fixture
    def store(self, postgres_options: PostgresOptions) -> Iterator[PostgresStore]:
        store = PostgresStore(postgres_options)
        try:
            yield store
        finally:
            store.close()


class TestPostgresConformanceWithHnsw(StoreSuite):
    """The same suite with the HNSW index built from the first chunk on: iterative scans must
    give the exact answers on these small stores."""

    @pytest.fixture
    def store(self, postgres_options: PostgresOptions) -> Iterator[PostgresStore]:
        store = PostgresStore(postgres_options.model_copy(update={"hnsw_threshold": 0}))
        try:
            yield store
        finally:
            store.close()


class TestPostgresThroughAnOrigin(OriginViewSuite):
    """The suite through one machine's view of a namespace (what every engram command on a
    shared store uses)."""

    @pytest.fixture
    def shared_store(self, postgres_options: PostgresOptions) -> Store:
        return PostgresStore(postgres_options)
