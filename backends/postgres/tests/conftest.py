"""Fixtures: a real PostgreSQL + pgvector (``engram_postgres.testing``), a namespace per test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engram_postgres import PostgresOptions
from engram_postgres.store import PostgresStore
from engram_postgres.testing import postgres_dsn, postgres_options

__all__ = ["pg_store", "postgres_dsn", "postgres_options"]


@pytest.fixture
def pg_store(postgres_options: PostgresOptions) -> Iterator[PostgresStore]:
    store = PostgresStore(postgres_options)
    try:
        yield store
    finally:
        store.close()
