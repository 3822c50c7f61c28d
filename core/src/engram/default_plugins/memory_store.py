"""``MemoryStore``: the exact, in-memory reference store every other backend is compared with.

- Vector search is brute force over float64 unit vectors: ``score`` = cosine similarity in
  [-1, 1]; a zero vector (stored or asked for) has cosine 0 with everything.
- Keyword search is BM25 (k1 = 1.2, b = 0.75, idf = ``log(1 + (N - n + 0.5) / (n + 0.5))`` as in
  Lucene and FTS5) over ``engram.search.tokenize`` words with OR semantics: a chunk matches if it
  holds any query word; repeated query words count once. N, n and the average length are taken
  over every chunk in the store, so a filter only removes hits and never changes a score.
- Both searches return at most ``k`` hits, best first, equal scores ordered by chunk id.
- Filters follow ``engram.filters.matches`` (the reference semantics).

Inputs are copied on the way in and results on the way out, so neither side can change the
other's data. A lock makes each call atomic; nothing survives the process (not "persistent").
"""

from __future__ import annotations

import copy
import math
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from typing import ClassVar

import numpy as np
import numpy.typing as npt
from pydantic import BaseModel, ConfigDict

from engram.closing import ClosingStore
from engram.errors import StoreError
from engram.filters import Filter, matches
from engram.hookspecs import hookimpl
from engram.models import Chunk, Document, Hit, IndexIdentity
from engram.protocols import StoreCapability
from engram.registry import Register
from engram.stores.checks import check_finite, check_identity, check_vector
from engram.text.words import tokenize

K1 = 1.2
B = 0.75

Vector = npt.NDArray[np.float64]


class MemoryStoreOptions(BaseModel):
    """The memory store takes no options."""

    model_config = ConfigDict(extra="forbid")


class MemoryStore(ClosingStore):
    """Exact brute-force store kept in process memory; the reference for the conformance suite."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset({"vector", "keyword", "filter"})

    def __init__(self, options: MemoryStoreOptions | None = None) -> None:
        self.options = options if options is not None else MemoryStoreOptions()
        self._lock = threading.RLock()
        self._identity: IndexIdentity | None = None
        self._chunks: dict[str, Chunk] = {}
        self._documents: dict[str, Document] = {}
        self._units: dict[str, Vector] = {}  # chunk id → vector scaled to length 1 (or zero)
        self._terms: dict[str, Counter[str]] = {}  # chunk id → term frequencies
        self._lengths: dict[str, int] = {}  # chunk id → number of tokens
        self._postings: dict[str, dict[str, int]] = {}  # term → {chunk id: frequency}
        self._total_length = 0
        self._matrix: tuple[list[str], Vector] | None = None  # cached (ids, unit rows)

    # identity

    def get_identity(self) -> IndexIdentity | None:
        return self._identity

    def set_identity(self, identity: IndexIdentity) -> None:
        """Record ``identity`` on first use; a different one later is an ``IdentityMismatch``."""
        with self._lock:
            if check_identity(self._identity, identity):
                self._identity = identity

    # writing

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        """Insert or overwrite chunks by id; all are validated before any is written."""
        with self._lock:
            prepared = [self._prepare(chunk) for chunk in chunks]
            for chunk, unit in prepared:
                self._remove(chunk.id)
                self._add(chunk, unit)

    def _prepare(self, chunk: Chunk) -> tuple[Chunk, Vector | None]:
        if not isinstance(chunk, Chunk):
            raise StoreError(
                f"upsert expects engram.Chunk objects, got {type(chunk).__name__}; "
                f"build them with Chunk(id=..., document_id=..., text=...)"
            )
        stored = _copy_chunk(chunk)
        if stored.vector is None:
            return stored, None
        return stored, self._unit(stored.vector, f"chunk {chunk.id!r}")

    def _unit(self, vector: Sequence[float], what: str) -> Vector:
        """Validate a vector against the identity (``stores.checks.check_vector``: the checks and
        words of every store) and scale it to length 1 (zero stays zero)."""
        identity = self._identity
        if identity is None:
            check_finite(vector, what)
            raise StoreError(
                f"{what} has a vector but the store has no index identity yet; call "
                f"store.set_identity(embedder_identity(embedder, chunker)) before adding vectors"
            )
        return _normalise(check_vector(vector, identity, what))

    def _add(self, chunk: Chunk, unit: Vector | None) -> None:
        self._chunks[chunk.id] = chunk
        if unit is not None:
            self._units[chunk.id] = unit
            self._matrix = None
        terms = Counter(tokenize(chunk.text))
        self._terms[chunk.id] = terms
        self._lengths[chunk.id] = terms.total()
        self._total_length += self._lengths[chunk.id]
        for term, freq in terms.items():
            self._postings.setdefault(term, {})[chunk.id] = freq

    def _remove(self, chunk_id: str) -> None:
        if self._chunks.pop(chunk_id, None) is None:
            return
        if self._units.pop(chunk_id, None) is not None:
            self._matrix = None
        terms = self._terms.pop(chunk_id)
        self._total_length -= self._lengths.pop(chunk_id)
        for term in terms:
            posting = self._postings[term]
            del posting[chunk_id]
            if not posting:
                del self._postings[term]

    def delete(self, ids: Sequence[str]) -> None:
        with self._lock:
            for chunk_id in ids:
                self._remove(chunk_id)

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Remove the documents' chunks and their document records."""
        wanted = set(document_ids)
        with self._lock:
            doomed = [c.id for c in self._chunks.values() if c.document_id in wanted]
            for chunk_id in doomed:
                self._remove(chunk_id)
            for document_id in wanted:
                self._documents.pop(document_id, None)

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None:
        """Every chunk of ``document_id`` not in ``keep`` goes."""
        kept = set(keep)
        with self._lock:
            doomed = [
                c.id
                for c in self._chunks.values()
                if c.document_id == document_id and c.id not in kept
            ]
            for chunk_id in doomed:
                self._remove(chunk_id)

    def delete_where(self, filter: Filter) -> None:
        with self._lock:
            doomed = [c.id for c in self._chunks.values() if matches(filter, c.metadata)]
            for chunk_id in doomed:
                self._remove(chunk_id)

    def put_document(self, document: Document) -> None:
        with self._lock:
            self._documents[document.id] = document.model_copy(
                update={"metadata": copy.deepcopy(document.metadata)}
            )

    def reset(self) -> None:
        with self._lock:
            self._identity = None
            self._chunks.clear()
            self._documents.clear()
            self._units.clear()
            self._terms.clear()
            self._lengths.clear()
            self._postings.clear()
            self._total_length = 0
            self._matrix = None

    def close(self) -> None:
        """Nothing to release; the data stays until the object is dropped."""

    # reading

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        """Chunks in the order of ``ids``; unknown ids are left out."""
        with self._lock:
            return [_copy_chunk(self._chunks[i]) for i in ids if i in self._chunks]

    def count(self, filter: Filter | None = None) -> int:
        with self._lock:
            if filter is None:
                return len(self._chunks)
            return sum(1 for c in self._chunks.values() if matches(filter, c.metadata))

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        """Every chunk, by id, in lists of ``batch_size``: a snapshot taken at the call."""
        if batch_size < 1:
            raise StoreError(f"batch_size must be at least 1, got {batch_size}")
        with self._lock:
            snapshot = [self._chunks[i] for i in sorted(self._chunks)]
        return _batches(snapshot, batch_size)

    def list_documents(self) -> dict[str, Document]:
        with self._lock:
            return {
                i: d.model_copy(update={"metadata": copy.deepcopy(d.metadata)})
                for i, d in sorted(self._documents.items())
            }

    # search

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """The ``k`` chunks with the highest cosine similarity to ``vector``."""
        _check_k(k)
        with self._lock:
            if self._identity is None:
                check_finite(vector, "the query vector")
                return []
            query = self._unit(vector, "the query")
            if k == 0:
                return []
            ids, matrix = self._unit_matrix()
            if filter is not None:
                chunks = self._chunks
                keep = [i for i, cid in enumerate(ids) if matches(filter, chunks[cid].metadata)]
                ids = [ids[i] for i in keep]
                matrix = matrix[keep]
            if not ids:
                return []
            scores = np.clip(matrix @ query, -1.0, 1.0)
            return self._top(ids, scores, k)

    def _unit_matrix(self) -> tuple[list[str], Vector]:
        if self._matrix is None:
            ids = sorted(self._units)
            dim = self._identity.dimension if self._identity else 0
            rows = np.stack([self._units[i] for i in ids]) if ids else np.zeros((0, dim))
            self._matrix = (ids, rows)
        return self._matrix

    def _top(self, ids: list[str], scores: Vector, k: int) -> list[Hit]:
        n = len(ids)
        if k < n:
            kth = np.partition(scores, n - k)[n - k]
            candidates = np.nonzero(scores >= kth)[0].tolist()
        else:
            candidates = list(range(n))
        best = sorted(candidates, key=lambda i: (-float(scores[i]), ids[i]))[:k]
        return [Hit(chunk=_copy_chunk(self._chunks[ids[i]]), score=float(scores[i])) for i in best]

    def keyword_ceiling(self, query: str) -> float | None:
        """The sum of the idf of the query's distinct words that some chunk holds: the BM25
        score of a chunk of average length holding each once (``engram.KeywordCeiling``)."""
        terms = sorted(set(tokenize(query)))
        with self._lock:
            total = len(self._chunks)
            held = [len(p) for t in terms if (p := self._postings.get(t))]
            if not held:
                return None
            return sum(math.log(1.0 + (total - n + 0.5) / (n + 0.5)) for n in held)

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        """BM25 over the store's chunks; chunks without any query word are not returned."""
        _check_k(k)
        terms = sorted(set(tokenize(query)))
        with self._lock:
            if k == 0 or not terms or not self._chunks:
                return []
            total = len(self._chunks)
            average = self._total_length / total
            scores: dict[str, float] = {}
            for term in terms:
                posting = self._postings.get(term)
                if not posting:
                    continue
                idf = math.log(1.0 + (total - len(posting) + 0.5) / (len(posting) + 0.5))
                for chunk_id, freq in posting.items():
                    norm = K1 * (1.0 - B + B * self._lengths[chunk_id] / average)
                    scores[chunk_id] = scores.get(chunk_id, 0.0) + idf * freq * (K1 + 1) / (
                        freq + norm
                    )
            ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
            hits: list[Hit] = []
            for chunk_id, score in ranked:
                chunk = self._chunks[chunk_id]
                if filter is not None and not matches(filter, chunk.metadata):
                    continue
                hits.append(Hit(chunk=_copy_chunk(chunk), score=score))
                if len(hits) == k:
                    break
            return hits


def _copy_chunk(chunk: Chunk) -> Chunk:
    """A copy sharing nothing mutable with ``chunk`` (vector list and metadata are copied)."""
    vector = [float(x) for x in chunk.vector] if chunk.vector is not None else None
    return chunk.model_copy(update={"vector": vector, "metadata": copy.deepcopy(chunk.metadata)})


def _normalise(array: Vector) -> Vector:
    """Scale to length 1 without overflow for huge finite values; a zero vector stays zero."""
    peak = float(np.max(np.abs(array)))
    if peak == 0.0:
        return np.zeros_like(array)
    scaled = array / peak
    unit: Vector = scaled / float(np.linalg.norm(scaled))
    return unit


def _check_k(k: int) -> None:
    if k < 0:
        raise StoreError(f"k must be 0 or more, got {k}")


def _batches(chunks: list[Chunk], size: int) -> Iterator[list[Chunk]]:
    for start in range(0, len(chunks), size):
        yield [_copy_chunk(c) for c in chunks[start : start + size]]


@hookimpl
def register_stores(register: Register) -> None:
    """The built-in ``memory`` store."""
    register("memory", MemoryStore, options=MemoryStoreOptions)
