"""Repairing supersede chains and links from the newer memory's side, before every index.

A supersede writes two files: the newer memory (naming the older one in ``supersedes``) and
then the older one (``status: superseded``, ``superseded_by``). The newer memory's list is the
truth: a crash between the two writes leaves the older file looking live, and ``repair`` (run
by ``engram index`` and ``engram rebuild``) finishes the job, so the next index always shows one
live head. In a folder engram must not write (external), the older memory is only hidden in
the index (``Writer.retired_ids``). One-way ``conflicts_with`` / ``related`` links (a crash
between the two files of a link) are completed the same way.

A fork (two memories naming one predecessor in ``supersedes``: a write that did not see an
earlier one, written but killed before it was indexed) is made a line again, as the writes
would have left it in order: the memories naming the predecessor are sorted by ``created_at``,
the oldest keeps it and each later one names the one before it instead, so the newest is the
one live head and every earlier head is superseded by its successor. Nothing is deleted.

``heal`` is what a write runs first when the previous write of its folder did not finish
(``engram.memories.lifecycle.pending``): the chains repaired, and every memory file of the folder
that is not indexed as it is on disk indexed, so the write plans against what the files say.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.ingest.document_ids import document_id_for
from engram.ingest.report import IndexReport
from engram.memories.files import memory_files, status_of
from engram.memories.lifecycle.links import LINK_KEYS, added
from engram.memories.lifecycle.locking import write_lock
from engram.memories.lifecycle.memory_io import index_documents, update_frontmatter
from engram.memories.scopes import MemoryFolder
from engram.memories.writer import Writer


@dataclass
class _Entry:
    doc_id: str
    meta: dict[str, Any]
    writable: bool


@dataclass
class RepairReport:
    """Memories whose files were completed (document ids)."""

    superseded: list[str] = field(default_factory=list)
    linked: list[str] = field(default_factory=list)
    unforked: list[str] = field(default_factory=list)

    def changed(self) -> list[str]:
        """Every memory file this repair wrote (document ids, once each)."""
        return list(dict.fromkeys([*self.unforked, *self.superseded, *self.linked]))


def repair(writer: Writer) -> RepairReport:
    """Mark every memory a newer one supersedes, and complete one-way links."""
    report = RepairReport()
    for folder in writer.folders:
        if folder.writable and folder.path.is_dir():
            with write_lock(folder.path):
                entries = _read(writer, folder.path, True)
                _repair_folder(writer, entries, report)
    retired: set[str] = set()
    for folder in writer.folders:
        if not folder.writable:
            entries = _read(writer, folder.path, False)
            for memory_id, names in _unforked(entries).items():
                entries[memory_id].meta["supersedes"] = names  # in memory only: not ours
            retired.update(_superseded_by(entries))
    writer.retired_ids = retired
    return report


def heal(writer: Writer, folder: MemoryFolder) -> IndexReport:
    """Finish what an interrupted write left (call under the folder's write lock): repair the
    folder's chains and links, then index each of its memory files the index does not hold as
    it is on disk (a file written but not indexed, or marked but not re-indexed)."""
    report = RepairReport()
    _repair_folder(writer, _read(writer, folder.path, True), report)
    ids = [document_id_for(path, writer.config.root) for path in memory_files(folder.path)]
    return index_documents(writer, list(dict.fromkeys([*ids, *report.changed()])))


def _read(writer: Writer, folder: Path, writable: bool) -> dict[str, _Entry]:
    out: dict[str, _Entry] = {}
    for path in memory_files(folder):
        try:
            meta = read_frontmatter(path.read_text(encoding="utf-8", errors="replace")).metadata
        except OSError:
            continue
        memory_id = meta.get("id")
        if isinstance(memory_id, str) and memory_id not in out:
            out[memory_id] = _Entry(document_id_for(path, writer.config.root), dict(meta), writable)
    return out


def _superseded_by(entries: dict[str, _Entry]) -> dict[str, str]:
    """Old id → the newest memory naming it in ``supersedes``."""
    newest: dict[str, tuple[str, str]] = {}
    for memory_id, entry in entries.items():
        names = entry.meta.get("supersedes")
        if not isinstance(names, list):
            continue
        created = str(entry.meta.get("created_at") or "")
        for old in (str(n) for n in names):
            known = old in entries and old != memory_id
            if known and (old not in newest or (created, memory_id) > newest[old]):
                newest[old] = (created, memory_id)
    return {old: by for old, (_, by) in newest.items()}


def _unforked(entries: dict[str, _Entry]) -> dict[str, list[str]]:
    """The new ``supersedes`` of the memories to change so no memory is named by two: of the
    memories naming one, sorted by (``created_at``, id), each after the first names the one
    before it in its place."""
    naming: dict[str, list[tuple[str, str]]] = {}
    for memory_id, entry in entries.items():
        names = entry.meta.get("supersedes")
        if not isinstance(names, list):
            continue
        created = str(entry.meta.get("created_at") or "")
        for old in dict.fromkeys(str(n) for n in names):
            if old in entries and old != memory_id:
                naming.setdefault(old, []).append((created, memory_id))
    lists: dict[str, list[str]] = {}
    for old, writers in naming.items():
        if len(writers) < 2:
            continue
        line = [memory_id for _, memory_id in sorted(writers)]
        for before, later in pairwise(line):
            current = lists.get(later) or [str(n) for n in entries[later].meta["supersedes"]]
            lists[later] = [before if name == old else name for name in current]
    return {
        memory_id: [n for n in dict.fromkeys(names) if n != memory_id]
        for memory_id, names in lists.items()
    }


def _repair_folder(writer: Writer, entries: dict[str, _Entry], report: RepairReport) -> None:
    for memory_id, line in _unforked(entries).items():
        entry = entries[memory_id]
        entry.meta["supersedes"] = line
        update_frontmatter(writer, entry.doc_id, {"supersedes": line})
        report.unforked.append(entry.doc_id)
    for old, by in _superseded_by(entries).items():
        entry = entries[old]
        if status_of(entry.meta) == "superseded" and entry.meta.get("superseded_by") == by:
            continue
        when = entries[by].meta.get("created_at")
        changes = {"status": "superseded", "superseded_by": by, "superseded_at": when}
        entry.meta.update(changes)
        update_frontmatter(writer, entry.doc_id, changes)
        report.superseded.append(entry.doc_id)
    for memory_id, entry in entries.items():
        for key in LINK_KEYS:
            names = entry.meta.get(key)
            if not isinstance(names, list):
                continue
            for other in (str(n) for n in names):
                target = entries.get(other)
                if target is None or other == memory_id:
                    continue
                links = added(target.meta.get(key), [memory_id])
                if links is not None:
                    target.meta[key] = links
                    update_frontmatter(writer, target.doc_id, {key: links})
                    report.linked.append(target.doc_id)
