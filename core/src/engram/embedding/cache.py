"""Content-hash embedding cache: a text is embedded once per model, whatever store it goes to.

One SQLite file (stdlib ``sqlite3``, WAL mode) maps ``(provider, model, dimension, input_type,
sha256(text))`` to a float32 vector. Every store and every process can share it, so re-indexing
unchanged text, rebuilding a store, or comparing two backends never pays for the same embeddings
twice.

``input_type`` is part of the key on purpose: asymmetric models (Voyage, E5 …) embed a text
differently as a stored document than as a search query, so the two vectors must not be confused.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from engram.dbfiles.sqlite import SqliteFile, SqliteHandle, write_transaction
from engram.errors import DimensionMismatch, EmbedderError, InvalidVector, StoreError
from engram.models import InputType
from engram.protocols import Embedder
from engram.text.redact import strip_private

log = logging.getLogger(__name__)

_BATCH = 500  # bound parameters per lookup, well under SQLite's limit
_ONE_STATEMENT = 500  # rows a write binds in one INSERT: 3,000 parameters (SQLite allows 32,766)

_SCHEMA = """
CREATE TABLE IF NOT EXISTS embeddings (
    provider    TEXT    NOT NULL,
    model       TEXT    NOT NULL,
    dimension   INTEGER NOT NULL,
    input_type  TEXT    NOT NULL,
    text_sha256 BLOB    NOT NULL,
    vector      BLOB    NOT NULL,
    PRIMARY KEY (provider, model, dimension, input_type, text_sha256)
) WITHOUT ROWID
"""


CACHE_FILE = SqliteFile(
    what="the embedding cache",
    steps=(_SCHEMA,),
    fix_unwritable="check the folder exists and is writable, or set [cache] path to another file",
    fix_newer="upgrade engram, or delete the file (it is only a cache)",
    fix_broken="delete the file, it is only a cache and will be recreated",
)


@dataclass(frozen=True, slots=True)
class CacheStats:
    """How much the cache holds: ``bytes`` is the size of the stored vectors."""

    entries: int
    bytes: int


def text_hash(text: str) -> bytes:
    """SHA-256 of the UTF-8 text (lone surrogates from odd files are kept, not rejected)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


Vector = Sequence[float] | npt.NDArray[np.float32]


def _kept(given: Vector, array: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """``array`` (``given`` checked by ``_as_float32``) as ours and read-only: one vector may be
    handed to several chunks, and an embedder may reuse the buffer it returned."""
    if array is given:
        array = array.copy()
    array.flags.writeable = False
    return array


def _as_float32(vector: Vector, dimension: int, who: str) -> npt.NDArray[np.float32]:
    """One vector as little-endian float32, checked for length and finite values."""
    try:
        array = np.asarray(vector, dtype="<f4")
    except (TypeError, ValueError):
        raise InvalidVector(
            f"{who} returned a vector that is not a list of numbers; fix the embedder"
        ) from None
    if array.ndim != 1 or array.shape[0] != dimension:
        got = array.shape[0] if array.ndim == 1 else f"shape {array.shape}"
        raise DimensionMismatch(
            f"{who} returned a vector of {got} dimensions, expected {dimension}; set the "
            "embedder's dimension to what the model returns (and rebuild stores made with it)"
        )
    if not np.isfinite(array).all():
        raise InvalidVector(
            f"{who} returned a vector with NaN or infinite values; check the embedder"
        )
    return array


class CacheKey(NamedTuple):
    """What a cached vector is filed under besides its text's hash: a text embedded by another
    model, at another dimension or as a query rather than a document is another entry."""

    provider: str
    model: str
    dimension: int
    input_type: InputType


class EmbeddingCache(SqliteHandle):
    """A shared SQLite file of embeddings, created on first use.

    Safe for several threads (one connection, serialised by a lock) and several processes or
    instances on the same file (WAL mode, busy timeout, short write transactions).
    """

    file = CACHE_FILE

    def get_many(self, key: CacheKey, texts: Sequence[str]) -> list[list[float] | None]:
        """The cached vector of each text, or ``None`` where there is none."""
        hashes = [text_hash(t) for t in texts]
        found = self._stored(key, list(dict.fromkeys(hashes)))
        return [
            np.frombuffer(found[h], dtype="<f4").tolist() if h in found else None for h in hashes
        ]

    def get_arrays(self, key: CacheKey, texts: Sequence[str]) -> dict[str, npt.NDArray[np.float32]]:
        """The cached vectors of the texts the cache holds, by text, as read-only float32
        arrays (what stores keep: no round trip through Python floats)."""
        by_hash = {text_hash(t): t for t in texts}
        found = self._stored(key, list(by_hash))
        return {by_hash[h]: np.frombuffer(blob, dtype="<f4") for h, blob in found.items()}

    def _stored(self, key: CacheKey, hashes: list[bytes]) -> dict[bytes, bytes]:
        """The stored vector bytes of each of ``hashes`` the cache holds (distinct hashes)."""
        found: dict[bytes, bytes] = {}
        with self._connection("read") as db:
            for i in range(0, len(hashes), _BATCH):
                batch = hashes[i : i + _BATCH]
                marks = ",".join("?" * len(batch))
                rows = db.execute(
                    "SELECT text_sha256, vector FROM embeddings WHERE provider = ? AND "
                    "model = ? AND dimension = ? AND input_type = ? AND text_sha256 IN "
                    f"({marks})",
                    (*key, *batch),
                ).fetchall()
                for digest, blob in rows:
                    if len(blob) == 4 * key.dimension:  # anything else is damage: a miss
                        found[bytes(digest)] = bytes(blob)
        return found

    def put_many(self, key: CacheKey, texts: Sequence[str], vectors: Sequence[Vector]) -> None:
        """Store one vector per text (replacing older entries); all or nothing."""
        if len(texts) != len(vectors):
            raise InvalidVector(
                f"put_many got {len(texts)} texts and {len(vectors)} vectors; pass one vector "
                "per text"
            )
        who = f"embedder {key.provider}/{key.model}"
        arrays = [_as_float32(v, key.dimension, who) for v in vectors]
        self.put_checked(key, texts, arrays)

    def put_checked(
        self, key: CacheKey, texts: Sequence[str], arrays: Sequence[npt.NDArray[np.float32]]
    ) -> None:
        """``put_many`` of vectors already checked as it checks them (``CachedEmbedder`` has
        just done so): not converted and checked twice."""
        params = [(*key, text_hash(t), a.tobytes()) for t, a in zip(texts, arrays, strict=True)]
        if not params:
            return
        insert = (
            "INSERT OR REPLACE INTO embeddings (provider, model, dimension, input_type, "
            "text_sha256, vector) VALUES "
        )
        with self._connection("write") as db:
            if len(params) <= _ONE_STATEMENT:  # one statement is all or nothing by itself
                rows = ", ".join(["(?, ?, ?, ?, ?, ?)"] * len(params))
                db.execute(insert + rows, [value for row in params for value in row])
                return
            with write_transaction(db):
                db.executemany(insert + "(?, ?, ?, ?, ?, ?)", params)

    def stats(self) -> CacheStats:
        with self._connection("read") as db:
            entries, size = db.execute(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(vector)), 0) FROM embeddings"
            ).fetchone()
        return CacheStats(entries=int(entries), bytes=int(size))

    def clear(self) -> None:
        """Forget every cached vector (all providers and models)."""
        with self._connection("write") as db:
            db.execute("DELETE FROM embeddings")


class CachedEmbedder:
    """An ``Embedder`` that asks the wrapped one only for texts the cache has not seen.

    Identical texts within one call are embedded once. Counters let callers (and tests) prove
    what reached the real embedder: ``calls`` (embed calls passed on), ``texts_embedded`` (texts
    in them) and ``hits`` (distinct texts per call answered by the cache).

    Every vector comes back at float32 precision (what stores keep), whether it was cached or
    fresh, with a cache or without, so a text always gets the same vector whichever path embeds
    it. A cache that cannot be read or written is skipped with a logged warning: embedding goes
    on. ``cache=None`` passes every text through (still counted).
    ``<private>`` spans are removed before a text is looked up or sent.
    """

    def __init__(self, embedder: Embedder, cache: EmbeddingCache | None) -> None:
        self.inner = embedder
        self.cache = cache
        self.name = embedder.name
        self.model = embedder.model
        self.dimension = embedder.dimension
        self.calls = 0
        self.texts_embedded = 0
        self.hits = 0
        self.cache_errors = 0

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        return [v.tolist() for v in self.embed_arrays(texts, input_type)]

    def embed_arrays(
        self, texts: Sequence[str], input_type: InputType = "document"
    ) -> list[npt.NDArray[np.float32]]:
        """``embed`` as read-only float32 arrays, what stores keep: ingest hands them on without
        a round trip through Python floats (a list of 384 floats a chunk, built and read back)."""
        # Every text an open memory embeds passes here, whoever asks (ingest, search, the
        # LangChain and LlamaIndex embeddings): private spans stop here, not in each caller.
        texts = [strip_private(t) for t in texts]
        unique = list(dict.fromkeys(texts))
        if not unique:
            return []
        known = self._lookup(unique, input_type)
        missing = [t for t in unique if t not in known]
        self.hits += len(known)
        if missing:
            fresh = self._embed_missing(missing, input_type)
            known.update(zip(missing, fresh, strict=True))
        return [known[t] for t in texts]

    def _lookup(
        self, unique: list[str], input_type: InputType
    ) -> dict[str, npt.NDArray[np.float32]]:
        if self.cache is None:
            return {}
        try:
            found = self.cache.get_arrays(self._key(input_type), unique)
        except StoreError as exc:
            self._cache_failed(exc)
            return {}
        return dict(found)

    def _embed_missing(
        self, missing: list[str], input_type: InputType
    ) -> list[npt.NDArray[np.float32]]:
        vectors = self.inner.embed(missing, input_type)
        self.calls += 1
        self.texts_embedded += len(missing)
        if len(vectors) != len(missing):
            raise EmbedderError(
                f"embedder {self.name}/{self.model} returned {len(vectors)} vectors for "
                f"{len(missing)} texts; the embedder is broken, report it to its maintainer"
            )
        who = f"embedder {self.name}/{self.model}"
        arrays = [_as_float32(v, self.dimension, who) for v in vectors]
        if self.cache is not None:
            try:
                self.cache.put_checked(self._key(input_type), missing, arrays)
            except StoreError as exc:
                self._cache_failed(exc)
        return [_kept(v, a) for v, a in zip(vectors, arrays, strict=True)]

    def _key(self, input_type: InputType) -> CacheKey:
        return CacheKey(self.name, self.model, self.dimension, input_type)

    def _cache_failed(self, exc: StoreError) -> None:
        self.cache_errors += 1
        log.warning("embedding cache skipped: %s", exc)
