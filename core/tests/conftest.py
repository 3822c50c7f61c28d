"""Shared fixtures for core's tests: the real built-in parts (memory store, hash embedder), and
an isolated config so no test reads the developer's own. These tests run with core alone
(`nox -s core`); the helper modules ``support`` and ``agent_support`` come from tests/ (the root
pyproject's pytest ``pythonpath``) and import nothing but core."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore
from engram.models import Chunk, Metadata
from engram.protocols import embedder_identity
from support import MemoryFactory, memory_factory

CHUNKER = "markdown:400/80"

NOTES: dict[str, tuple[str, Metadata]] = {
    "deploy": (
        "We deploy the web service with Docker containers on Kubernetes.",
        {"type": "decision", "year": 2024, "tags": ["ops"]},
    ),
    "coffee": (
        "The user prefers dark roast coffee without sugar in the morning.",
        {"type": "preference", "year": 2023, "tags": ["personal"]},
    ),
    "python": (
        "Use Python 3.11 and pytest for every backend package in this project.",
        {"type": "project-config", "year": 2024, "tags": ["dev", "ops"]},
    ),
    "sqlite": (
        "SQLite full text search ranks rows with the bm25 function.",
        {"type": "fact", "year": 2022, "tags": ["dev"]},
    ),
    "bug": (
        "The timeout error in the sync job was solved by raising the HTTP client timeout.",
        {"type": "error-solution", "year": 2024, "tags": ["ops", "dev"]},
    ),
}


@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[MemoryFactory]:
    """Open a Memory rooted at tmp_path on the built-in memory store and hash embedder (store,
    embedder and settings overridable); nothing persists from one open to the next."""
    with memory_factory(tmp_path, "memory") as factory:
        yield factory


@pytest.fixture
def store() -> MemoryStore:
    """An empty memory store."""
    return MemoryStore()


@pytest.fixture
def embedder() -> HashEmbedder:
    """The hash embedder at its default 256 dimensions."""
    return HashEmbedder(HashEmbedderOptions())


@pytest.fixture
def notes_store(store: MemoryStore, embedder: HashEmbedder) -> MemoryStore:
    """A memory store holding the five NOTES, embedded with the hash embedder."""
    store.set_identity(embedder_identity(embedder, CHUNKER))
    vectors = embedder.embed([text for text, _ in NOTES.values()])
    store.upsert(
        [
            Chunk(id=name, document_id=f"{name}.md", text=text, vector=vector, metadata=metadata)
            for (name, (text, metadata)), vector in zip(NOTES.items(), vectors, strict=True)
        ]
    )
    return store
