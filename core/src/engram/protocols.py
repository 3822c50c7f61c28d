"""The four parts a plugin can provide. Structural (``typing.Protocol``): implement, don't inherit.

A store or embedder is built by its registered factory from a validated options model, so the
constructor signature is the plugin's own business.

Besides the four, a part may offer optional capabilities that core uses when present and does
without otherwise: ``Closes``, ``Optimizes``, ``Diagnoses``, ``HasOptions`` (any part),
``PrunesDocuments``, ``ReplacesDocuments``, ``ReadsStamps``, ``CandidateSearch`` and
``SharedStore`` (stores),
and ``ChecksContradictions``, ``Condenses``, ``ReportsFailures`` (extractors). Each is a
runtime-checkable protocol, so core asks ``isinstance(part, Optimizes)``, never ``getattr``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, ClassVar, Literal, Protocol, runtime_checkable

from engram.candidates import Candidates, Keys, Scores
from engram.filters import Filter
from engram.models import (
    Chunk,
    Document,
    ExtractedMemory,
    ExtractionMode,
    Hit,
    IndexIdentity,
    InputType,
    KnownMemory,
    Message,
    SearchMode,
    SearchResult,
)
from engram.stamps import Stamp

StoreCapability = Literal["vector", "keyword", "filter", "persistent", "concurrent-writers"]


@runtime_checkable
class Store(Protocol):
    """Holds chunks (text, vector, metadata) and document records; answers vector and keyword
    search.

    Contract (pinned down by ``engram.testing.StoreSuite``):

    - ``upsert`` is idempotent and overwrites text, vector and metadata of an existing id; it never
      mutates its inputs. Vectors must match the recorded identity's dimension
      (``DimensionMismatch``) and be finite (``InvalidVector``); nothing is written on error.
    - ``get`` keeps the order of ``ids`` and leaves out unknown ids.
    - ``delete`` / ``delete_documents`` / ``delete_where`` remove chunks from vector AND keyword
      results; unknown ids are not an error. ``delete_documents`` also removes document records.
    - ``vector_search`` returns at most ``k`` hits, best first, ``score`` = cosine similarity.
    - ``keyword_search`` takes the user's raw text (the store escapes it for its own query
      language), returns at most ``k`` hits, best first, ``score`` > 0 (BM25-like, higher better);
      a query with no words returns no hits.
    - ``iter_chunks`` yields every chunk (vectors included) in batches, for migration and checks.
    - ``put_document`` / ``list_documents`` keep one record per source document (id → hash).
    - ``reset`` removes every chunk, document and the identity: the store is as new.
    - ``set_identity`` records the index identity on first use and raises ``IdentityMismatch``
      (or ``DimensionMismatch``) when a different one is asked for later.
    - ``with store:`` closes the store at the end of the block, and ``close`` may be called twice
      (``engram.ClosingStore`` gives both; ``engram.check_identity`` and ``engram.check_vector``
      make the identity and vector checks as every built-in store does).
    """

    capabilities: ClassVar[frozenset[StoreCapability]]

    def get_identity(self) -> IndexIdentity | None: ...
    def set_identity(self, identity: IndexIdentity) -> None: ...

    def upsert(self, chunks: Sequence[Chunk]) -> None: ...
    def get(self, ids: Sequence[str]) -> list[Chunk]: ...
    def delete(self, ids: Sequence[str]) -> None: ...
    def delete_documents(self, document_ids: Sequence[str]) -> None: ...
    def delete_where(self, filter: Filter) -> None: ...
    def count(self, filter: Filter | None = None) -> int: ...
    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]: ...

    def put_document(self, document: Document) -> None: ...
    def list_documents(self) -> dict[str, Document]: ...

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]: ...
    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]: ...

    def reset(self) -> None: ...
    def close(self) -> None: ...


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors of a fixed ``dimension``.

    ``input_type`` tells asymmetric models (Voyage, E5…) whether a text is stored or searched for;
    symmetric models ignore it. A missing API key raises ``MissingKeyError`` naming the variable.
    """

    name: str
    model: str
    dimension: int

    def embed(
        self, texts: Sequence[str], input_type: InputType = "document"
    ) -> list[list[float]]: ...


@runtime_checkable
class Extractor(Protocol):
    """Finds typed memories (preferences, decisions, error fixes…) in a conversation.

    Contract (pinned down by ``engram.testing.ExtractorSuite``): ``normal`` mode returns any
    number of typed facts; ``summary`` mode at most one ``session-summary``; ``init`` mode reads
    project files (given as messages) and includes a ``project-brief`` when it finds one. An
    extractor never raises for a model's or a server's failure: it returns ``[]`` (and says why
    in ``last_error`` when it implements ``ReportsFailures``). Core strips ``<private>`` spans
    and cuts the conversation to the mode's window before calling it.
    """

    name: str

    def extract(
        self, messages: Sequence[Message], mode: ExtractionMode = "normal"
    ) -> list[ExtractedMemory]: ...


@runtime_checkable
class ChecksContradictions(Protocol):
    """Optional for an extractor: which stored memories a new one makes stale.

    ``candidates`` are live memories close to ``new`` (same scope); the answer is the ids of
    those that ``new`` contradicts or replaces, ``[]`` when unsure (a wrong "stale" hides a true
    memory from search, so when in doubt keep both). Ids not among the candidates are ignored.
    An extractor without this check never supersedes anything.
    """

    def find_contradictions(
        self, new: ExtractedMemory, candidates: Sequence[KnownMemory]
    ) -> list[str]: ...


@runtime_checkable
class Condenses(Protocol):
    """Optional for an extractor: old session summaries distilled into one ``learned-pattern``,
    or ``None`` when there is nothing to learn (core then archives them)."""

    def condense(self, summaries: Sequence[KnownMemory]) -> ExtractedMemory | None: ...


@runtime_checkable
class ReportsFailures(Protocol):
    """Optional for an extractor: why its last call returned nothing (every provider failed,
    malformed answers…), or ``None`` after a call that worked. Core shows it as a warning."""

    last_error: str | None


@runtime_checkable
class Searcher(Protocol):
    """Ranks a store's chunks for a query: vector, keyword or hybrid."""

    name: str

    def search(
        self,
        query: str,
        store: Store,
        embedder: Embedder | None,
        *,
        mode: SearchMode = "hybrid",
        limit: int = 6,
        filter: Filter | None = None,
    ) -> SearchResult: ...


@runtime_checkable
class Closes(Protocol):
    """Optional for an embedder or extractor: release what it holds (HTTP clients, a usage
    ledger). ``Memory.close`` calls it. Stores always have ``close``."""

    def close(self) -> None: ...


@runtime_checkable
class Summarises(Protocol):
    """A report that can say itself in one line (``engram optimize`` prints it)."""

    def summary(self) -> str: ...


@runtime_checkable
class Optimizes(Protocol):
    """Optional for a store: compact, drop old versions, (re)build indexes after a large
    import. ``engram optimize`` runs it; the benchmark runs it once after a bulk ingest. The
    result is printed (its ``summary()`` when it has one) and returned as JSON."""

    def optimize(self) -> Any: ...


@runtime_checkable
class PrunesDocuments(Protocol):
    """Optional for a store: delete every chunk of one document that is not in ``keep``, found
    by the chunks' document id (not by any record). Indexing calls it after upserting a
    document's new chunks, so chunks a crash left behind go with the next index; a store
    without it has the document's chunks deleted before the upsert instead."""

    def prune_document(self, document_id: str, keep: Sequence[str]) -> None: ...


@runtime_checkable
class ReplacesDocuments(Protocol):
    """Optional for a store: one document's chunks become exactly ``chunks`` (upserted, every
    other chunk with its id deleted) and its record ``document``, all at once. Indexing an
    edited file then costs one write instead of three (upsert, prune, record); a store without
    it gets those three, in that crash-safe order (``engram.ingest.engine``)."""

    def replace_document(self, document: Document, chunks: Sequence[Chunk]) -> None: ...


@runtime_checkable
class ReadsStamps(Protocol):
    """Optional for a store: the ``Stamp`` (``engram.stamps``) of every record of one of
    ``sources`` whose metadata ``path`` is one of ``roots`` or lies under one (posix, no
    trailing "/"), in one bulk read; and the full records of a few ids. A re-index reads the
    stamps, stats each file and fetches the records of changed and removed files only; without
    it, core derives both from ``list_documents`` (``engram.ingest.records``), which builds
    every record."""

    def document_stamps(
        self, sources: Sequence[str], roots: Sequence[str], settled_s: float
    ) -> dict[str, Stamp]: ...
    def get_documents(self, ids: Sequence[str]) -> dict[str, Document]: ...


@runtime_checkable
class CandidateSearch(Protocol):
    """Optional for a store: search answered as ``Candidates`` (ids, scores, the store's keys),
    so the searcher builds chunks only for the hits it returns. A key names one chunk for the
    whole search: fusion merges the two halves by key. Without it, core wraps
    ``vector_search`` / ``keyword_search`` (``engram.search.candidates``); the results are the
    same either way (``StoreSuite`` checks both agree).

    ``vector_candidates`` / ``keyword_candidates`` rank as ``vector_search`` / ``keyword_search``
    do; ``key_scores`` is the cosine of each key's stored vector with ``vector`` (NaN without
    one); ``chunks_for`` builds the chunks of ``keys`` in that order, leaving out keys gone
    since, with their vectors only when ``vectors`` is true.
    """

    def vector_candidates(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> Candidates: ...
    def keyword_candidates(
        self, query: str, k: int, filter: Filter | None = None
    ) -> Candidates: ...
    def key_scores(self, keys: Keys, vector: Sequence[float]) -> Scores: ...
    def chunks_for(self, keys: Keys, *, vectors: bool = False) -> list[Chunk]: ...


@runtime_checkable
class KeywordCeiling(Protocol):
    """Optional for a store with BM25 keyword search: the query's keyword ceiling, the score a
    chunk of average length holding each of ``query``'s words once would get from
    ``keyword_search``: the sum of those words' idf, as the store weighs them (a word the query
    repeats counts as often as the store counts it; a word no chunk holds counts 0). None when
    no chunk holds any of them.

    Weighted fusion with ``keyword_scale = "ceiling"`` (the default) divides each keyword score
    by it: a match on one common word of a long request then brings a small keyword part, and a
    match on all of a question's rare words about the whole of it, whatever the corpus size.
    A store without it is fused on the relative scale (``s / best s``)."""

    def keyword_ceiling(self, query: str) -> float | None: ...


@runtime_checkable
class Diagnoses(Protocol):
    """Optional for a store: how it is set up (driver, extensions, server, paths), as JSON-able
    data for ``engram doctor``. Must not raise for a store that works."""

    def diagnostics(self) -> dict[str, Any]: ...


@runtime_checkable
class SharedStore(Protocol):
    """Optional for a store: ``shared`` is true when this store's data is on a server that many
    machines write to (PostgreSQL, a Chroma server, LanceDB on object storage). Core then keeps
    each vault's documents apart by its origin (``engram.stores.origins``): a vault's index,
    rebuild, prune, forget and reset change only its own origin's rows, and search spans all
    origins. A store without it, or with ``shared`` false, belongs to one vault."""

    shared: bool


@runtime_checkable
class HasOptions(Protocol):
    """Optional for a part: the validated options it was built from, so the same part can be
    built again (``StoreSuite.reopen`` builds ``type(store)(store.options)``)."""

    options: Any


def embedder_identity(embedder: Embedder, chunker: str) -> IndexIdentity:
    """The identity a store records for vectors made by ``embedder`` over ``chunker``'s chunks."""
    return IndexIdentity(
        embedder=embedder.name, model=embedder.model, dimension=embedder.dimension, chunker=chunker
    )
