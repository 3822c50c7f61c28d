"""The no-op part of a vault re-index in one pass: walk the vault's folders, keep the files the
include/exclude/.gitignore rules select, label them, ``stat`` each where it was found, and set
aside only those whose record's stamp does not prove them unchanged.

An unchanged file costs its directory entry, one ``endswith`` (the default patterns), one
string concatenation (its id), one ``fstatat`` and one tuple compare: no ``Path``, no
``VaultFile``, no sort. Only the suspects (new, changed, touched, relabelled or unreadable
files) become ``VaultFile``s, sorted by id as ``sync`` reads and writes them. The rules are
those of ``engram.ingest.vault``; which label a file gets is the caller's (``Labels``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from engram.errors import ConfigError
from engram.ingest.bulk import gc_paused
from engram.ingest.document_ids import relative_id
from engram.ingest.vault import Selection, VaultFile, walk
from engram.stamps import Stamp, Stat, stat_of

# (document id, location, root, label, stat or None when it failed) of a file to read
_Suspect = tuple[str, str, Path, str, Stat | None]


class Labels(Protocol):
    """The ``source`` label of the files found (``engram.ingest.sources.FileLabels``)."""

    def of_root(self, root: Path) -> str | None:
        """The label of every file under ``root`` (resolved), or None when it depends on the
        file."""

    def of_file(self, location: str) -> str:
        """The label of one file (its absolute path)."""


@dataclass
class Survey:
    """What one pass found: the files to read (sorted by id, with the stat they had when
    found), how many files there are in all, how many are unchanged, and the ids of records
    under the roots whose file is gone."""

    suspects: list[tuple[VaultFile, Stat | None]]
    files: int
    unchanged: int
    removed: set[str] = field(default_factory=set)


def scan(
    roots: Sequence[Path],
    *,
    project_root: Path,
    selection: Selection,
    respect_gitignore: bool,
    labels: Labels,
    known: Mapping[str, Stamp],
    resolved: bool = False,
) -> Survey:
    """Walk ``roots`` (a root that is a file is taken as given; the first root to find a file
    keeps it) against ``known``, the stamps of the records under them (``engram.stamps``).
    ``resolved``: the roots are resolved already (not resolved again)."""
    with gc_paused():  # many small objects, no cycles (see engram.ingest.bulk)
        found: set[str] = set()
        suspects: list[_Suspect] = []
        project = project_root.resolve().as_posix()
        for raw_root in roots:
            root = raw_root if resolved else raw_root.expanduser().resolve()
            if not root.exists():
                raise ConfigError(
                    f"vault path {raw_root} does not exist; check vault.paths or the path you gave"
                )
            if root.is_file():
                _single(root, relative_id(root, project), labels, known, found, suspects)
            else:
                _folder(root, project, selection, respect_gitignore, labels, known, found, suspects)
        in_store = sum(s[0] in known for s in suspects)
        unchanged = len(found) - len(suspects)
        removed = set() if unchanged + in_store == len(known) else known.keys() - found
        suspects.sort()
        return Survey(
            suspects=[(VaultFile(loc, root, i, label), st) for i, loc, root, label, st in suspects],
            files=len(found),
            unchanged=unchanged,
            removed=removed,
        )


def _folder(
    root: Path,
    project: str,
    selection: Selection,
    respect_gitignore: bool,
    labels: Labels,
    known: Mapping[str, Stamp],
    found: set[str],
    suspects: list[_Suspect],
) -> None:
    """Every selected file under the folder ``root``: the loop a no-op spends its time in."""
    # A file's id is the root's id and its path below the root: one concatenation a file.
    base = relative_id(root, project)
    prefix = "" if base == "." else base if base.endswith("/") else base + "/"
    root_label = labels.of_root(root)
    suffixes = selection.suffixes
    excludes = selection.excludes
    stamp_for = known.get
    add = found.add
    for folder, head, entries in walk(root, respect_gitignore):
        id_head = prefix + head
        whole = suffixes is not None and selection.folder_included(head.rstrip("/"))
        for entry in entries:
            name = entry.name
            if suffixes is not None:
                if not (whole or name.endswith(suffixes)):
                    continue
            elif not selection.matches(head + name):
                continue
            if excludes and selection.excluded(head + name):
                continue
            doc_id = id_head + name
            if doc_id in found:  # an earlier root found it
                continue
            add(doc_id)
            label = root_label or labels.of_file(folder + name)
            try:
                st = entry.stat()
            except OSError:  # gone since the listing, or unreadable: the read says why
                suspects.append((doc_id, folder + name, root, label, None))
                continue
            size, mtime_ns, inode, ctime_ns = st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns
            stamp = stamp_for(doc_id)
            if stamp is not None and stamp == (size, mtime_ns, inode, ctime_ns, label, doc_id):
                continue
            suspects.append((doc_id, folder + name, root, label, (size, mtime_ns, inode, ctime_ns)))


def _single(
    path: Path,
    doc_id: str,
    labels: Labels,
    known: Mapping[str, Stamp],
    found: set[str],
    suspects: list[_Suspect],
) -> None:
    """A root that is a file: taken as given, whatever the include patterns say."""
    if doc_id in found:
        return
    found.add(doc_id)
    location = os.fspath(path)
    label = labels.of_root(path.parent) or labels.of_file(location)
    try:
        st = os.stat(location)
    except OSError:
        suspects.append((doc_id, location, path.parent, label, None))
        return
    stat = stat_of(st)
    if known.get(doc_id) != (*stat, label, doc_id):  # one file: clarity over speed
        suspects.append((doc_id, location, path.parent, label, stat))


class Finder:
    """``scan`` with a vault's settings bound: what ``sync_vault`` calls with the roots and the
    stamps of their records."""

    def __init__(
        self, project_root: Path, selection: Selection, respect_gitignore: bool, labels: Labels
    ) -> None:
        self.project_root = project_root
        self.selection = selection
        self.respect_gitignore = respect_gitignore
        self.labels = labels

    def __call__(
        self, roots: Sequence[Path], known: Mapping[str, Stamp], *, resolved: bool = False
    ) -> Survey:
        return scan(
            roots,
            project_root=self.project_root,
            selection=self.selection,
            respect_gitignore=self.respect_gitignore,
            labels=self.labels,
            known=known,
            resolved=resolved,
        )
