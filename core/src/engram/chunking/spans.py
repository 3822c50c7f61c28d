"""What a chunker returns (chunks with their place in the file) and the stable ids chunks get."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from engram.models import Metadata

CHUNK_ID_LENGTH = 32


class ChunkSpan(BaseModel):
    """One chunk of a source text and where it sits in the original file."""

    model_config = ConfigDict(frozen=True)

    text: str
    start_line: int = Field(ge=1)
    end_line: int = Field(ge=1)
    start_char: int = Field(ge=0)
    end_char: int = Field(ge=0)
    headings: list[str] = Field(default_factory=list)
    index: int = Field(ge=0)

    @property
    def heading_path(self) -> str:
        """The enclosing headings as one breadcrumb, e.g. ``Projects > engram > Storage``."""
        return " > ".join(self.headings)


class ChunkedDocument(BaseModel):
    """A document's chunks, its frontmatter and any problem met while reading it."""

    metadata: Metadata = Field(default_factory=dict)
    chunks: list[ChunkSpan] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)


class Chunker(Protocol):
    """What ingestion needs from a chunker; ``describe()`` goes into the store's index identity."""

    def chunk(self, text: str) -> list[ChunkSpan]: ...
    def chunk_document(self, text: str) -> ChunkedDocument: ...
    def describe(self) -> str: ...


def chunk_id(document_id: str, text: str, occurrence: int = 0) -> str:
    """Stable id from content: unchanged chunks of an edited file keep their ids.

    ``occurrence`` tells apart identical chunk texts within one document (0 for the first).
    """
    digest = hashlib.sha256()
    for part in (document_id, text, str(occurrence)):
        data = part.encode("utf-8", "surrogatepass")
        digest.update(len(data).to_bytes(8, "big"))
        digest.update(data)
    return digest.hexdigest()[:CHUNK_ID_LENGTH]


def chunk_ids(document_id: str, chunks: Sequence[ChunkSpan]) -> list[str]:
    """Ids for a document's chunks in order, counting repeats of the same text."""
    seen: dict[str, int] = {}
    ids = []
    for chunk in chunks:
        occurrence = seen.get(chunk.text, 0)
        seen[chunk.text] = occurrence + 1
        ids.append(chunk_id(document_id, chunk.text, occurrence))
    return ids
