"""Which source a document of the index comes from, as a person names it: vault notes, memories
(any memory folder), collections or sessions. The store only knows ``source`` (``memory`` for
every markdown file, ``sessions`` for transcripts), so the rest is told apart by path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.scopes import MemoryFolder, folder_of

NOTES, MEMORIES, COLLECTIONS = "vault notes", "memories", "collections"


class SourceNamer:
    """Names the source of a document from its metadata (``source`` and ``path``)."""

    def __init__(self, root: Path, folders: Sequence[MemoryFolder], collections: Path) -> None:
        self.root = root.resolve()
        self.folders = list(folders)
        self.collections = collections.resolve()

    def __call__(self, metadata: dict[str, Any]) -> str:
        source = str(metadata.get("source", "unknown"))
        if source != "memory":
            return source
        raw = Path(str(metadata.get("path", "")))
        path = (raw if raw.is_absolute() else self.root / raw).resolve()
        if path.is_relative_to(self.collections):
            return COLLECTIONS
        return MEMORIES if folder_of(self.folders, path) is not None else NOTES
