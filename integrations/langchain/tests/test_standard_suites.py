"""LangChain's own standard tests (``langchain-tests``), unmodified: this file only provides
the fixtures and properties the suites ask for, once per engram store. No test is overridden,
skipped or marked to fail."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.vectorstores import VectorStore
from langchain_tests.integration_tests import (
    RetrieversIntegrationTests,
    VectorStoreIntegrationTests,
)

from engram_langchain import EngramRetriever, EngramVectorStore
from support import memory_factory


def own_database(request: pytest.FixtureRequest, backend: str) -> None:
    """PostgreSQL: a new database for this test (``engram_postgres.testing``)."""
    if backend == "postgres":
        request.getfixturevalue("postgres_database")


class _VectorStoreOnEngram(VectorStoreIntegrationTests):
    backend: ClassVar[str]

    @pytest.fixture
    def vectorstore(self, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[VectorStore]:
        """An empty store on a fresh memory; the suite wants a new one per test."""
        own_database(request, self.backend)
        with memory_factory(tmp_path, self.backend) as open_memory:
            yield EngramVectorStore(open_memory())


class TestSQLiteVectorStore(_VectorStoreOnEngram):
    backend = "sqlite"


class TestLanceDBVectorStore(_VectorStoreOnEngram):
    backend = "lancedb"


class TestChromaVectorStore(_VectorStoreOnEngram):
    backend = "chroma"


class TestPostgresVectorStore(_VectorStoreOnEngram):
    backend = "postgres"


NOTES = [
    "The billing service retries failed payments three times.",
    "Payments are reconciled against the bank every night.",
    "Refunds of payments go through the billing service.",
    "The billing team owns invoices, payments and refunds.",
    "Deploys go out on Tuesdays after the change review.",
]


class _RetrieverOnEngram(RetrieversIntegrationTests):
    backend: ClassVar[str]
    _store: EngramVectorStore

    @pytest.fixture(autouse=True)
    def _filled_store(self, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[None]:
        """The suite builds retrievers from ``retriever_constructor_params``: a store holding
        a few notes about payments, so a query about them has at least three answers."""
        own_database(request, self.backend)
        with memory_factory(tmp_path, self.backend) as open_memory:
            self._store = EngramVectorStore(open_memory())
            self._store.add_documents([Document(page_content=text) for text in NOTES])
            yield

    @property
    def retriever_constructor(self) -> type[BaseRetriever]:
        return EngramRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"store": self._store}

    @property
    def retriever_query_example(self) -> str:
        return "billing payments"


class TestSQLiteRetriever(_RetrieverOnEngram):
    backend = "sqlite"


class TestLanceDBRetriever(_RetrieverOnEngram):
    backend = "lancedb"


class TestChromaRetriever(_RetrieverOnEngram):
    backend = "chroma"


class TestPostgresRetriever(_RetrieverOnEngram):
    backend = "postgres"
