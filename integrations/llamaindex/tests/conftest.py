"""Fixtures: every test runs against a fresh engram memory in a temporary folder, once per real
store (SQLite, LanceDB, embedded Chroma, PostgreSQL) with the offline ``hash`` embedder. The
stores are the engram-sqlite, engram-lancedb, engram-chroma and engram-postgres distributions of
this repository; one that is not installed fails its tests (engram names the missing plugin), it
is never skipped. PostgreSQL is a real server (``engram_postgres.testing``), a new database for
each test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram import Memory
from engram_llamaindex import EngramEmbedding, EngramVectorStore
from engram_postgres.testing import postgres_database, postgres_dsn
from support import MemoryFactory, memory_factory

__all__ = ["postgres_database", "postgres_dsn"]

STORES = ("sqlite", "lancedb", "chroma", "postgres")


@pytest.fixture(params=STORES)
def backend(request: pytest.FixtureRequest) -> str:
    """The name of the engram store under test."""
    name: str = request.param
    if name == "postgres":
        request.getfixturevalue("postgres_database")
    return name


@pytest.fixture
def open_memory(tmp_path: Path, backend: str) -> Iterator[MemoryFactory]:
    """``open_memory()``: a memory on ``backend`` rooted at ``tmp_path`` (closed afterwards);
    calling it again reopens the same project, as a new process would."""
    with memory_factory(tmp_path, backend) as factory:
        yield factory


@pytest.fixture
def memory(open_memory: MemoryFactory) -> Memory:
    return open_memory()


@pytest.fixture
def store(memory: Memory) -> EngramVectorStore:
    return EngramVectorStore(memory)


@pytest.fixture
def embed_model(memory: Memory) -> EngramEmbedding:
    return EngramEmbedding.from_memory(memory)
