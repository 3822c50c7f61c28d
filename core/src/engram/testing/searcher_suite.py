"""``SearcherSuite``: what every Searcher must do over a real store and embedder.

Provide a ``searcher`` fixture; the suite supplies the reference store and the hash embedder
(override ``search_store`` / ``search_embedder`` to use your own).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pytest

from engram.default_plugins.hash_embedder import HashEmbedder, HashEmbedderOptions
from engram.default_plugins.memory_store import MemoryStore, MemoryStoreOptions
from engram.errors import EmptyQuery
from engram.filters import Eq
from engram.models import Chunk, IndexIdentity, InputType, SearchMode
from engram.protocols import Embedder, Searcher, Store
from engram.testing.integrity import SuiteIntegrity

NOTES = {
    "deploy": ("Roll back a bad deploy with make rollback ENV=prod.", "ops"),
    "replica": ("Promote the PostgreSQL replica with pg_ctl promote.", "db"),
    "webhooks": (
        "Stripe webhooks are retried for 72 hours; handlers must be idempotent.",
        "payments",
    ),
    "oncall": ("Acknowledge a page within five minutes and open an incident channel.", "ops"),
    "style": ("Prefer small modules, type hints everywhere, and real databases in tests.", "dev"),
}


class _Unreachable:
    """An embedder whose API is down: the network edge, failing."""

    name, model, dimension = "hash", "feature-hash-v1", 64

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        raise ConnectionError("connection refused")


class SearcherSuite(SuiteIntegrity):
    """Conformance tests for a Searcher."""

    _conformance_suite = True

    @pytest.fixture
    def searcher(self) -> Searcher | Iterator[Searcher]:
        raise pytest.UsageError(
            "SearcherSuite needs a `searcher` fixture; define it in your subclass"
        )

    @pytest.fixture
    def search_embedder(self) -> Embedder:
        return HashEmbedder(HashEmbedderOptions(dimension=64))

    @pytest.fixture
    def search_store(self, search_embedder: Embedder) -> Iterator[Store]:
        store = MemoryStore(MemoryStoreOptions())
        store.set_identity(
            IndexIdentity(
                embedder=search_embedder.name,
                model=search_embedder.model,
                dimension=search_embedder.dimension,
                chunker="none",
            )
        )
        texts = [text for text, _ in NOTES.values()]
        vectors = search_embedder.embed(texts)
        store.upsert(
            [
                Chunk(
                    id=key, document_id=f"{key}.md", text=text, vector=vec, metadata={"area": area}
                )
                for (key, (text, area)), vec in zip(NOTES.items(), vectors, strict=True)
            ]
        )
        yield store
        store.close()

    @pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
    def test_hits_are_sorted_and_limited(
        self, searcher: Searcher, search_store: Store, search_embedder: Embedder, mode: SearchMode
    ) -> None:
        """At most ``limit`` hits, best first, in every mode. Failure: fusion not re-sorted."""
        result = searcher.search(
            "rollback deploy replica", search_store, search_embedder, mode=mode, limit=2
        )
        assert len(result.hits) <= 2 and result.mode == mode
        assert [h.score for h in result.hits] == sorted(
            (h.score for h in result.hits), reverse=True
        )

    @pytest.mark.parametrize("mode", ["hybrid", "keyword"])
    def test_the_matching_note_ranks_first(
        self, searcher: Searcher, search_store: Store, search_embedder: Embedder, mode: SearchMode
    ) -> None:
        """A query naming a note's rare words finds that note first.
        Failure: keyword scores inverted (FTS5's bm25() is negative) or normalised away."""
        result = searcher.search(
            "PostgreSQL replica promote", search_store, search_embedder, mode=mode
        )
        assert result.hits and result.hits[0].chunk.id == "replica"

    @pytest.mark.parametrize("mode", ["hybrid", "vector", "keyword"])
    def test_filters_apply_in_every_mode(
        self, searcher: Searcher, search_store: Store, search_embedder: Embedder, mode: SearchMode
    ) -> None:
        """Only chunks that pass the filter are returned. Failure: the filter is applied to one
        side of the fusion only."""
        result = searcher.search(
            "deploy page incident rollback",
            search_store,
            search_embedder,
            mode=mode,
            limit=10,
            filter=Eq(field="area", value="ops"),
        )
        assert {h.chunk.metadata["area"] for h in result.hits} <= {"ops"}

    def test_punctuation_only_query_is_an_empty_query_error(
        self, searcher: Searcher, search_store: Store, search_embedder: Embedder
    ) -> None:
        """A query with no words raises ``EmptyQuery`` with a helpful message."""
        with pytest.raises(EmptyQuery):
            searcher.search("?! -- **", search_store, search_embedder)

    def test_hybrid_degrades_to_keyword_when_the_embedder_fails(
        self, searcher: Searcher, search_store: Store
    ) -> None:
        """An unreachable embedder never breaks a search: keyword hits, ``degraded=True`` and a
        warning. Failure: the embedder's exception escaped the searcher."""
        result = searcher.search("stripe webhooks", search_store, _Unreachable(), mode="hybrid")
        assert result.degraded and result.warnings
        assert result.hits and result.hits[0].chunk.id == "webhooks"
