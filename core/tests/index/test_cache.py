"""The content-hash embedding cache and the embedder wrapper that consults it."""

from __future__ import annotations

import hashlib
import math
import multiprocessing
import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_support import RecordingEmbedder
from engram.chunking import MarkdownChunker
from engram.default_plugins.hash_embedder import HashEmbedder
from engram.embedding.cache import CachedEmbedder, CacheKey, EmbeddingCache
from engram.errors import DimensionMismatch, EmbedderError, InvalidVector, StoreError
from engram.models import InputType
from engram.protocols import Embedder


class CountingEmbedder:
    """Deterministic vectors from sha256(input_type, text); records every call it receives."""

    def __init__(self, dimension: int = 8, model: str = "count-1", name: str = "counting") -> None:
        self.name = name
        self.model = model
        self.dimension = dimension
        self.received: list[list[str]] = []
        self.returned_dimension = dimension
        self.poison: float | None = None
        self.drop_one = False

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        self.received.append(list(texts))
        out = []
        for text in texts:
            digest = hashlib.sha256(f"{input_type}\0{text}".encode()).digest()
            vector = [b / 255.0 - 0.5 + 1e-9 for b in digest[: self.returned_dimension]]
            if self.poison is not None:
                vector[0] = self.poison
            out.append(vector)
        return out[:-1] if self.drop_one else out


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "nested" / "cache" / "embeddings.sqlite"


@pytest.fixture
def cache(cache_path: Path) -> Iterator[EmbeddingCache]:
    with EmbeddingCache(cache_path) as opened:
        yield opened


def f32(vector: Sequence[float]) -> list[float]:
    return [float(x) for x in np.asarray(vector, dtype=np.float32)]


# --------------------------------------------------------------------------- the cache file


def test_file_is_created_on_first_use_in_wal_mode(cache_path: Path) -> None:
    cache = EmbeddingCache(cache_path)
    assert not cache_path.exists()
    assert cache.get_many(CacheKey("p", "m", 3, "document"), ["x"]) == [None]
    assert cache_path.is_file()
    cache.close()
    with sqlite3.connect(cache_path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_put_then_get_round_trips_at_float32(cache: EmbeddingCache) -> None:
    vectors = [[0.1, 0.2, 0.3], [1e-8, -2.5, 3.25]]
    cache.put_many(CacheKey("p", "m", 3, "document"), ["a", "b"], vectors)
    got = cache.get_many(CacheKey("p", "m", 3, "document"), ["b", "missing", "a", "b"])
    assert got == [f32(vectors[1]), None, f32(vectors[0]), f32(vectors[1])]


@pytest.mark.parametrize(
    "key",
    [
        ("other", "m", 3, "document"),
        ("p", "other", 3, "document"),
        ("p", "m", 4, "document"),
        ("p", "m", 3, "query"),
    ],
)
def test_every_part_of_the_key_matters(
    cache: EmbeddingCache, key: tuple[str, str, int, InputType]
) -> None:
    cache.put_many(CacheKey("p", "m", 3, "document"), ["a"], [[1.0, 2.0, 3.0]])
    provider, model, dimension, input_type = key
    assert cache.get_many(CacheKey(provider, model, dimension, input_type), ["a"]) == [None]
    assert cache.get_many(CacheKey("p", "m", 3, "document"), ["a"]) == [[1.0, 2.0, 3.0]]


def test_stats_and_clear(cache: EmbeddingCache) -> None:
    assert (cache.stats().entries, cache.stats().bytes) == (0, 0)
    cache.put_many(CacheKey("p", "m", 4, "document"), ["a", "b", "c"], [[1.0] * 4] * 3)
    cache.put_many(CacheKey("p", "m", 4, "document"), ["a"], [[2.0] * 4])  # replaces, no new entry
    assert (cache.stats().entries, cache.stats().bytes) == (3, 3 * 4 * 4)
    assert cache.get_many(CacheKey("p", "m", 4, "document"), ["a"]) == [[2.0] * 4]
    cache.clear()
    assert cache.stats().entries == 0
    assert cache.get_many(CacheKey("p", "m", 4, "document"), ["a", "b"]) == [None, None]


def test_many_texts_in_one_lookup(cache: EmbeddingCache) -> None:
    texts = [f"text {i}" for i in range(1300)]  # more than one batch of bound parameters
    cache.put_many(CacheKey("p", "m", 2, "document"), texts, [[float(i), 0.5] for i in range(1300)])
    got = cache.get_many(CacheKey("p", "m", 2, "document"), [*texts, "unknown"])
    assert got[:-1] == [[float(i), 0.5] for i in range(1300)]
    assert got[-1] is None


def test_bad_vectors_are_refused_and_nothing_is_written(cache: EmbeddingCache) -> None:
    with pytest.raises(DimensionMismatch, match="2 dimensions, expected 3"):
        cache.put_many(CacheKey("p", "m", 3, "document"), ["a", "b"], [[1.0, 2.0, 3.0], [1.0, 2.0]])
    with pytest.raises(InvalidVector, match="NaN or infinite"):
        cache.put_many(CacheKey("p", "m", 3, "document"), ["a"], [[1.0, math.nan, 3.0]])
    with pytest.raises(InvalidVector, match="one vector per text"):
        cache.put_many(CacheKey("p", "m", 3, "document"), ["a", "b"], [[1.0, 2.0, 3.0]])
    assert cache.stats().entries == 0


def test_damaged_file_is_a_store_error_that_says_to_delete_it(cache_path: Path) -> None:
    cache_path.parent.mkdir(parents=True)
    cache_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="delete the file"):
        EmbeddingCache(cache_path).get_many(CacheKey("p", "m", 3, "document"), ["a"])


def test_file_from_a_newer_engram_is_refused(cache_path: Path) -> None:
    cache_path.parent.mkdir(parents=True)
    with sqlite3.connect(cache_path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(StoreError, match=r"newer engram .*upgrade engram"):
        EmbeddingCache(cache_path).stats()


# --------------------------------------------------------------------------- CachedEmbedder


def test_cached_embedder_is_an_embedder(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder(dimension=8, model="m8", name="counting")
    wrapped = CachedEmbedder(inner, cache)
    assert isinstance(wrapped, Embedder)
    assert (wrapped.name, wrapped.model, wrapped.dimension) == ("counting", "m8", 8)


def test_second_embed_of_the_same_texts_never_reaches_the_embedder(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    first = wrapped.embed(["alpha", "beta"])
    second = wrapped.embed(["beta", "alpha"])
    assert inner.received == [["alpha", "beta"]]
    assert (wrapped.calls, wrapped.texts_embedded, wrapped.hits) == (1, 2, 2)
    assert second == [first[1], first[0]]
    assert first == [f32(v) for v in CountingEmbedder().embed(["alpha", "beta"])]


def test_only_missing_texts_are_embedded_once_each(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    wrapped.embed(["a"])
    vectors = wrapped.embed(["b", "a", "b", "c", "b"])
    assert inner.received == [["a"], ["b", "c"]]
    assert vectors[0] == vectors[2] == vectors[4]
    assert vectors[1] == wrapped.embed(["a"])[0]
    assert (wrapped.calls, wrapped.texts_embedded, wrapped.hits) == (2, 3, 2)
    assert wrapped.embed([]) == []
    assert wrapped.calls == 2


def test_query_and_document_vectors_are_cached_apart(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    document = wrapped.embed(["same text"], input_type="document")
    query = wrapped.embed(["same text"], input_type="query")
    assert document != query
    assert inner.received == [["same text"], ["same text"]]
    assert wrapped.embed(["same text"], input_type="query") == query
    assert wrapped.calls == 2


def test_two_wrappers_over_one_file_share_hits(cache_path: Path) -> None:
    with EmbeddingCache(cache_path) as first_cache, EmbeddingCache(cache_path) as second_cache:
        first = CachedEmbedder(CountingEmbedder(), first_cache)
        second_inner = CountingEmbedder()
        second = CachedEmbedder(second_inner, second_cache)
        made = first.embed(["shared one", "shared two"])
        assert second.embed(["shared two", "shared one"]) == [made[1], made[0]]
        assert second_inner.received == []
        assert (second.calls, second.hits) == (0, 2)


def test_other_model_or_dimension_misses(cache: EmbeddingCache) -> None:
    CachedEmbedder(CountingEmbedder(dimension=8, model="a"), cache).embed(["text"])
    other_model = CountingEmbedder(dimension=8, model="b")
    other_dimension = CountingEmbedder(dimension=4, model="a")
    other_provider = CountingEmbedder(dimension=8, model="a", name="elsewhere")
    for inner in (other_model, other_dimension, other_provider):
        wrapped = CachedEmbedder(inner, cache)
        wrapped.embed(["text"])
        assert (wrapped.calls, wrapped.hits) == (1, 0)
    assert cache.stats().entries == 4


def test_wrong_dimension_from_the_embedder_is_refused_and_not_cached(
    cache: EmbeddingCache,
) -> None:
    inner = CountingEmbedder(dimension=8)
    inner.returned_dimension = 6
    wrapped = CachedEmbedder(inner, cache)
    with pytest.raises(DimensionMismatch, match="counting/count-1 returned a vector of 6"):
        wrapped.embed(["text"])
    assert cache.stats().entries == 0
    inner.returned_dimension = 8
    assert len(wrapped.embed(["text"])[0]) == 8
    assert wrapped.calls == 2


def test_broken_embedder_answers_are_typed_errors(cache: EmbeddingCache) -> None:
    inner = CountingEmbedder()
    inner.poison = math.inf
    with pytest.raises(InvalidVector, match="NaN or infinite"):
        CachedEmbedder(inner, cache).embed(["x"])
    inner.poison = None
    inner.drop_one = True
    with pytest.raises(EmbedderError, match="returned 1 vectors for 2 texts"):
        CachedEmbedder(inner, cache).embed(["x", "y"])
    assert cache.stats().entries == 0


def test_without_a_cache_every_call_passes_through_and_is_counted() -> None:
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, None)
    first = wrapped.embed(["a", "b", "a"])
    assert wrapped.embed(["a", "b"]) == first[:2]
    assert inner.received == [["a", "b"], ["a", "b"]]
    assert (wrapped.calls, wrapped.texts_embedded, wrapped.hits) == (2, 4, 0)
    assert first[0] == first[2]
    inner.returned_dimension = 3
    with pytest.raises(DimensionMismatch):
        wrapped.embed(["c"])


def test_unusable_cache_degrades_to_embedding(cache_path: Path) -> None:
    cache_path.parent.mkdir(parents=True)
    cache_path.write_bytes(b"garbage" * 1000)
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, EmbeddingCache(cache_path))
    assert len(wrapped.embed(["a", "b"])) == 2
    assert inner.received == [["a", "b"]]
    assert wrapped.cache_errors == 2  # the lookup and the write both skipped


def test_reindexing_unchanged_chunks_never_calls_the_embedder(cache: EmbeddingCache) -> None:
    note = "# Plans\nShip the cache.\n\n# Risks\nDisk full.\n\n# People\nAda, Linus.\n"
    chunker = MarkdownChunker(max_tokens=16, overlap=0)
    inner = CountingEmbedder()
    wrapped = CachedEmbedder(inner, cache)
    wrapped.embed([c.text for c in chunker.chunk(note)])
    assert wrapped.calls == 1

    wrapped.embed([c.text for c in chunker.chunk(note)])  # unchanged file, indexed again
    assert wrapped.calls == 1

    edited = note.replace("Disk full.", "Disk full, or the network is down.")
    wrapped.embed([c.text for c in chunker.chunk(edited)])
    assert inner.received[-1] == ["# Risks\nDisk full, or the network is down."]
    assert wrapped.texts_embedded == 4


@settings(deadline=None, max_examples=40)
@given(st.lists(st.text(max_size=20), max_size=12), st.lists(st.text(max_size=20), max_size=12))
def test_any_mix_of_hits_and_misses_matches_fresh_vectors(
    tmp_path_factory: pytest.TempPathFactory, first: list[str], second: list[str]
) -> None:
    path = tmp_path_factory.mktemp("prop") / "cache.sqlite"
    with EmbeddingCache(path) as cache:
        inner = CountingEmbedder()
        wrapped = CachedEmbedder(inner, cache)
        wrapped.embed(first)
        got = wrapped.embed(second)
        assert got == [f32(v) for v in CountingEmbedder().embed(second)]
        new = set(second) - set(first)
        assert wrapped.texts_embedded == len(set(first)) + len(new)
        assert wrapped.calls == (1 if first else 0) + (1 if new else 0)


# --------------------------------------------------------------------------- concurrency


def test_two_connections_write_and_read_concurrently(cache_path: Path) -> None:
    caches = [EmbeddingCache(cache_path), EmbeddingCache(cache_path)]
    start = threading.Barrier(4)
    errors: list[BaseException] = []

    def work(worker: int) -> None:
        cache = caches[worker % 2]
        try:
            start.wait()
            for batch in range(20):
                texts = [f"w{worker} b{batch} t{i}" for i in range(10)]
                cache.put_many(
                    CacheKey("p", "m", 2, "document"), texts, [[float(worker), 1.0]] * 10
                )
                assert all(
                    v is not None for v in cache.get_many(CacheKey("p", "m", 2, "document"), texts)
                )
        except BaseException as exc:  # reported below; a thread cannot fail the test itself
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for cache in caches:
        assert cache.stats().entries == 4 * 20 * 10
        assert cache.get_many(CacheKey("p", "m", 2, "document"), ["w3 b19 t9"]) == [[3.0, 1.0]]
        cache.close()


def test_many_openers_of_a_new_file_never_see_it_locked(tmp_path: Path) -> None:
    """Switching a new file to WAL takes an exclusive lock that SQLite's busy timeout does not
    wait for; the opener retries, so openers racing on a new file all succeed."""
    for trial in range(30):
        path = tmp_path / f"race-{trial}" / "embeddings.sqlite"
        caches = [EmbeddingCache(path) for _ in range(4)]
        start = threading.Barrier(len(caches))
        errors: list[BaseException] = []
        threads = [threading.Thread(target=_put_one, args=(c, start, errors)) for c in caches]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for cache in caches:
            cache.close()
        assert errors == []


def _put_one(cache: EmbeddingCache, start: threading.Barrier, errors: list[BaseException]) -> None:
    try:
        start.wait()
        cache.put_many(CacheKey("p", "m", 2, "document"), ["t"], [[1.0, 0.0]])
    except BaseException as exc:  # reported by the test
        errors.append(exc)


def test_another_process_writes_while_this_one_does(cache_path: Path) -> None:
    script = (
        "import sys\n"
        "from engram.embedding.cache import CacheKey, EmbeddingCache\n"
        "cache = EmbeddingCache(sys.argv[1])\n"
        "for b in range(30):\n"
        "    texts = [f'child {b} {i}' for i in range(20)]\n"
        "    cache.put_many(CacheKey('p', 'm', 2, 'document'), texts, [[2.0, 2.0]] * 20)\n"
        "cache.close()\n"
    )
    child = subprocess.Popen([sys.executable, "-c", script, str(cache_path)])
    with EmbeddingCache(cache_path) as cache:
        for b in range(30):
            texts = [f"parent {b} {i}" for i in range(20)]
            cache.put_many(CacheKey("p", "m", 2, "document"), texts, [[1.0, 1.0]] * 20)
        assert child.wait() == 0
        assert cache.stats().entries == 2 * 30 * 20
        assert cache.get_many(CacheKey("p", "m", 2, "document"), ["child 29 19", "parent 0 0"]) == [
            [2.0, 2.0],
            [1.0, 1.0],
        ]


def test_a_forked_child_opens_its_own_connection(cache_path: Path) -> None:
    with EmbeddingCache(cache_path) as cache:
        cache.put_many(CacheKey("p", "m", 2, "document"), ["parent"], [[1.0, 1.0]])
        context = multiprocessing.get_context("fork")
        child = context.Process(target=_child_writes, args=(cache,))
        child.start()
        child.join()
        assert child.exitcode == 0
        assert cache.get_many(CacheKey("p", "m", 2, "document"), ["child", "parent"]) == [
            [2.0, 2.0],
            [1.0, 1.0],
        ]


def _child_writes(cache: EmbeddingCache) -> None:
    assert cache.get_many(CacheKey("p", "m", 2, "document"), ["parent"]) == [[1.0, 1.0]]
    cache.put_many(CacheKey("p", "m", 2, "document"), ["child"], [[2.0, 2.0]])
    cache.close()


def test_private_spans_never_reach_the_wrapped_embedder_or_the_cache(cache_path: Path) -> None:
    """Whoever embeds through an open memory (ingest, search, the framework integrations'
    embeddings), the wrapped embedder and the cache see the text without its private spans."""
    inner = RecordingEmbedder(HashEmbedder())
    with EmbeddingCache(cache_path) as cache:
        cached = CachedEmbedder(inner, cache)
        secret, public = cached.embed(["key <PRIVATE>sk-1</private > ok", "key  ok"], "query")
        assert secret == public and inner.seen == ["key  ok"]
        assert cached.embed(["key <private>other</private> ok"], "query") == [public]
        assert inner.seen == ["key  ok"]  # answered by the cache, keyed on the public text


class BufferEmbedder(CountingEmbedder):
    """Returns float32 arrays and writes over the last one it returned on its next call, as an
    embedder that reuses one output buffer would."""

    def __init__(self) -> None:
        super().__init__()
        self.last: np.ndarray | None = None

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        if self.last is not None:
            self.last[:] = 9.0
        out = [np.asarray(v, dtype=np.float32) for v in super().embed(texts, input_type)]
        self.last = out[-1]
        return out  # type: ignore[return-value]  # arrays act as the lists the protocol names


@pytest.mark.parametrize("cached", [True, False])
def test_embed_arrays_gives_embeds_vectors_as_read_only_float32_arrays(
    cache: EmbeddingCache, cached: bool
) -> None:
    """What ingest hands the store: each text's vector as ``embed`` gives it (float32, whether
    cached, fresh or without a cache), read-only, and never the embedder's own buffer."""
    inner = BufferEmbedder()
    embedder = CachedEmbedder(inner, cache if cached else None)
    texts = ["alpha", "beta", "alpha", "gamma"]
    first = embedder.embed_arrays(texts)
    kept = [a.copy() for a in first]
    embedder.embed_arrays(["delta"])  # the embedder writes over its last output
    again = embedder.embed_arrays(texts)  # cached: read back from the file
    lists = embedder.embed(texts)
    for arrays in (first, again):
        assert [a.dtype for a in arrays] == [np.dtype(np.float32)] * 4
        assert not any(a.flags.writeable for a in arrays)
        assert [a.tolist() for a in arrays] == lists == [a.tolist() for a in kept]
    assert lists[0] == f32(CountingEmbedder().embed(["alpha"])[0])
    assert inner.received[0] == ["alpha", "beta", "gamma"]  # each distinct text once
    assert len(inner.received) == (2 if cached else 4)
