"""Where an indexed document comes from: the ``source`` label the index stores, and the name
stats, tools and the dashboard give it.

Labels: ``vault`` (a note of the vault), ``memory`` (a file of a memory folder or of the
collections folder), ``sessions`` (an agent transcript). Stores written before the ``vault``
label existed say ``memory`` for vault notes too: SQLite relabels them in a schema migration;
LanceDB and Chroma keep the old label until the next ``engram index`` relabels the file (its
record's label differs from the file's, so it is chunked again, its vectors from the embedding
cache). Until then ``SourceNamer`` still names such a document right, from its path.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from engram.filters import Eq, Filter, In
from engram.ingest.vault import VaultFile

VAULT, MEMORY, SESSIONS = "vault", "memory", "sessions"
# What each source is called in stats, tools and the dashboard.
NOTES, MEMORIES, COLLECTIONS = "vault notes", "memories", "collections"


# What a search or recall may be limited to: ``memory`` is every markdown file (stored memories
# and vault notes, as before the ``vault`` label), ``vault`` the vault's notes alone.
SEARCHABLE = (MEMORY, VAULT, SESSIONS)


def source_filter(name: str) -> Filter:
    """The filter that limits a search to the source ``name`` (one of ``SEARCHABLE``)."""
    if name == MEMORY:
        return In(field="source", values=[MEMORY, VAULT])
    return Eq(field="source", value=name)


def _prefixes(folders: Sequence[Path]) -> tuple[str, ...]:
    return tuple(f.as_posix().rstrip("/") + "/" for f in folders)


class FileLabels:
    """The label of a vault file: ``memory`` under one of ``memory_roots`` (the memory folders
    and the collections folder, resolved), ``vault`` anywhere else. Decided once a vault root
    when it holds no memory folder or lies in one (the usual case: a 10K-file no-op then tests
    no path a file); ``engram.ingest.scan.Labels`` is its shape."""

    def __init__(self, memory_roots: Sequence[Path]) -> None:
        self._inside = _prefixes(memory_roots)

    def of_root(self, root: Path) -> str | None:
        """The label of every file under ``root``, or None when some are memories and some
        not."""
        inside = self._inside
        own = root.as_posix().rstrip("/") + "/"
        if own.startswith(inside):
            return MEMORY
        if not any(prefix.startswith(own) for prefix in inside):
            return VAULT
        return None

    def of_file(self, location: str) -> str:
        return MEMORY if location.replace(os.sep, "/").startswith(self._inside) else VAULT


def label_files(files: Sequence[VaultFile], memory_roots: Sequence[Path]) -> list[VaultFile]:
    """``files`` labelled in place by ``FileLabels`` (a root's label decided once)."""
    labels = FileLabels(memory_roots)
    root: Path | None = None
    root_label: str | None = None
    for file in files:
        if file.root is not root:
            root = file.root
            root_label = labels.of_root(root)
        file.source = root_label or labels.of_file(file.location)
    return list(files)


class SourceNamer:
    """Names the source of a document from its record (``source`` and ``path``): vault notes,
    memories, collections or sessions; an old ``memory`` label is told apart by its path."""

    def __init__(self, root: Path, folders: Sequence[Path], collections: Path) -> None:
        self.root = root.resolve()
        self._memories = _prefixes([f.resolve() for f in folders])
        self._collections = _prefixes([collections.resolve()])

    def __call__(self, metadata: dict[str, Any]) -> str:
        source = str(metadata.get("source", "unknown"))
        if source == VAULT:
            return NOTES
        if source != MEMORY:
            return source
        raw = Path(str(metadata.get("path", "")))
        path = (raw if raw.is_absolute() else self.root / raw).as_posix()
        if path.startswith(self._collections):
            return COLLECTIONS
        return MEMORIES if path.startswith(self._memories) else NOTES
