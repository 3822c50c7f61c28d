"""Pydantic records passed between the pipeline, the plugins and the user.

Vectors travel as plain ``list[float]`` so every backend and every wire format sees the same thing;
a chunk's vector may also be a one-dimensional float32 numpy array (what embedders compute), kept
as a read-only copy so ingest skips the round trip through Python floats. It serialises (and
compares) as the same list of numbers.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

import numpy as np
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    PlainSerializer,
    PlainValidator,
    TypeAdapter,
    WithJsonSchema,
)

from engram.types import EXTRACTED_TYPES as EXTRACTED_TYPES
from engram.types import MemoryType as MemoryType

Metadata = dict[str, JsonValue]
InputType = Literal["document", "query"]
SearchMode = Literal["hybrid", "vector", "keyword"]
FusionMethod = Literal["weighted", "rrf"]
KeywordScale = Literal["ceiling", "relative", "saturating"]
# How weighted fusion sets the two weights for a query (engram.search.fusion.balance_weights).
FusionBalance = Literal["standout", "fixed"]
# What `remember` does when the new memory's file name is taken (docs/memory-lifecycle.md).
OnCollision = Literal["new", "update", "fail"]


_FLOATS = TypeAdapter(list[float])


def _vector(value: Any) -> Sequence[float]:
    """A float32 1-D array is kept (read-only copy); anything else validates as ``list[float]``."""
    if isinstance(value, np.ndarray):
        if value.ndim == 1 and value.dtype == np.float32:
            kept = value.copy()
            kept.flags.writeable = False
            return kept  # type: ignore[return-value]  # a float32 array acts as a sequence
        value = value.tolist()
    return _FLOATS.validate_python(value)


def _plain(value: Sequence[float]) -> list[float]:
    return value.tolist() if isinstance(value, np.ndarray) else list(value)


Vector = Annotated[
    Sequence[float],
    PlainValidator(_vector),
    PlainSerializer(_plain, return_type=list[float]),
    WithJsonSchema({"type": "array", "items": {"type": "number"}}),
]
"""A vector: a list of floats, or a read-only 1-D float32 numpy array (typed as a sequence, which
it acts as; serialised as a list)."""


class Chunk(BaseModel):
    """A piece of a document: the unit that is embedded, stored and returned by search.

    ``document_hash`` is the content hash of the whole source document when the chunk was made;
    incremental sync compares it with the file on disk.
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    document_id: str = Field(min_length=1)
    text: str
    vector: Vector | None = None
    metadata: Metadata = Field(default_factory=dict)
    document_hash: str = ""

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Chunk):
            return NotImplemented
        mine, theirs = self.vector, other.vector
        if not isinstance(mine, np.ndarray) and not isinstance(theirs, np.ndarray):
            return super().__eq__(other)
        same = (mine is None) == (theirs is None) and (
            mine is None or theirs is None or np.array_equal(np.asarray(mine), np.asarray(theirs))
        )
        fields = set(type(self).model_fields) - {"vector"}
        return same and all(getattr(self, f) == getattr(other, f) for f in fields)

    __hash__ = BaseModel.__hash__


class Document(BaseModel):
    """What a store remembers about a source document (a markdown file, a session transcript).

    Sync writes the record after the document's chunks and removes it before touching them, so a
    missing or stale record always means "index this document again".
    """

    model_config = ConfigDict(frozen=True)

    id: str = Field(min_length=1)
    hash: str
    metadata: Metadata = Field(default_factory=dict)


class IndexIdentity(BaseModel):
    """What the vectors in a store were made with. A store never mixes two identities."""

    model_config = ConfigDict(frozen=True)

    embedder: str
    model: str
    dimension: int = Field(gt=0)
    chunker: str

    def describe(self) -> str:
        return f"{self.embedder}/{self.model} ({self.dimension} dims, chunker {self.chunker})"


class Hit(BaseModel):
    """One search result. Higher ``score`` is better.

    Stores fill ``score`` in their own scale: cosine similarity (-1..1) for vector search, a
    positive BM25-style relevance for keyword search. Searchers fuse them and keep the parts.
    """

    chunk: Chunk
    score: float
    vector_score: float | None = None
    keyword_score: float | None = None


class SearchResult(BaseModel):
    """Hits plus how they were obtained, so callers can tell a degraded answer from a full one."""

    query: str
    mode: SearchMode
    hits: list[Hit]
    degraded: bool = False
    warnings: list[str] = Field(default_factory=list)


class Message(BaseModel):
    """A turn of a conversation, the input of an extractor."""

    role: Literal["user", "assistant", "system"]
    content: str
    timestamp: str | None = None
    # The speaker's name when the conversation names its speakers (two people talking): a fact
    # taken from this turn is about them, never about the other speaker.
    name: str | None = None


ExtractionMode = Literal["normal", "summary", "init"]

# The memory types, what they mean and how they behave: one table, ``engram.types``.
# ``EXTRACTED_TYPES`` is what extractors look for by default (``[capture] types`` narrows it).


class ExtractedMemory(BaseModel):
    """A typed memory an extractor found in a conversation.

    ``importance`` (default 1.0, 0 to 10) orders what ``engram prune`` removes first; extractors
    may raise it for things a user stated firmly (a rule, a hard constraint).
    """

    type: MemoryType
    content: str = Field(min_length=1)
    title: str | None = None
    tags: list[str] = Field(default_factory=list)
    importance: float = Field(default=1.0, ge=0, le=10)
    # What it is about (engram.memories.judge.slots): the person, the user, the project, a service;
    # what is said of it; the value. Optional: core reads them from the text when not given.
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None


class KnownMemory(BaseModel):
    """A stored memory as a contradiction check or a condensation sees it: its id, type, text
    and age. Built by core from the memory's markdown file."""

    model_config = ConfigDict(frozen=True)

    id: str
    type: str | None = None
    title: str | None = None
    content: str
    created_at: str | None = None
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None


# Memory statuses that take a memory out of search, recall and lists (kept on disk as history).
HIDDEN_STATUSES = ("superseded", "archived")


class MemoryInfo(BaseModel):
    """What ``list`` shows of a memory file (its frontmatter plus where it is)."""

    id: str | None = None
    path: str
    title: str
    type: str | None = None
    scope: str | None = None
    tags: list[str] = Field(default_factory=list)
    created_at: str | None = None
    updated_at: str | None = None
    source: str | None = None
    project: str | None = None
    importance: float = 1.0
    # Its slots (engram.memories.judge.slots), when its frontmatter records them.
    subject: str | None = None
    attribute: str | None = None
    value: str | None = None
    status: str = "live"
    superseded_by: str | None = None
    supersedes: list[str] = Field(default_factory=list)
    # Other live memories it is linked to: maybe a reversal (newest shown first), or close but
    # different. Both directions are written in the frontmatter.
    conflicts_with: list[str] = Field(default_factory=list)
    related: list[str] = Field(default_factory=list)
    # Earlier wordings kept by merges and restores (their texts: ``revisions_of``).
    revision_count: int = 0
    # From the folder's access log (search and recall hits), not the frontmatter.
    access_count: int = 0
    last_accessed_at: str | None = None

    @property
    def live(self) -> bool:
        return self.status not in HIDDEN_STATUSES

    @property
    def touched_at(self) -> str | None:
        """When the memory last changed: ``updated_at``, else ``created_at``."""
        return self.updated_at or self.created_at


class Revision(BaseModel):
    """An earlier wording of a memory, kept when a merge or a restore replaced it: the text,
    its title, when it was written, when and why it was replaced."""

    wording: str
    title: str | None = None
    when: str | None = None
    replaced_at: str | None = None
    why: str = "merged"


class StoredMemory(MemoryInfo):
    """A memory just written (``action`` created), merged into an existing one holding the same
    fact (``updated``: the earlier wording kept as a revision) or restored (``restored``), what it
    made stale, what it was linked to, how many chunks indexing it produced, and any warning
    (an embedder that failed leaves it searchable by keyword only until the next index)."""

    id: str
    action: str = "created"
    superseded: list[str] = Field(default_factory=list)
    linked_conflicts: list[str] = Field(default_factory=list)
    linked_related: list[str] = Field(default_factory=list)
    chunks: int = 0
    warnings: list[str] = Field(default_factory=list)


class Excerpt(BaseModel):
    """Lines of a vault file (or turns of a session), as ``engram get`` and the ``memory_get``
    tool return them."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str
