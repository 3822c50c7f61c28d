"""Finding the markdown files of a vault: include/exclude globs, .gitignore, hidden folders.

This module lists folders and tests names; ``engram.ingest.scan`` walks a vault with it and
stats what it finds, and reading, hashing and deciding what changed is ``sync``'s job.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # pathspec loads on the first walk: a recall imports this module, never walks
    from pathspec import GitIgnoreSpec

ALWAYS_SKIPPED_DIRS = frozenset({".git", ".engram", ".venv", "node_modules", "__pycache__"})


class VaultFile:
    """A file found in a vault: where it is (absolute, resolved), the vault root it was found
    under (absolute, resolved), its document id and the index's ``source`` label for it
    (``engram.ingest.sources``: discovery cannot tell a memory folder from the vault, so
    ``Memory.index`` labels vault notes ``vault``). The location is kept as text and ``path``
    built on first use: a no-op re-index of ten thousand files then builds no ``Path`` at all
    (one costs ~10 µs, as much as the ``stat`` that proves the file unchanged)."""

    __slots__ = ("_path", "document_id", "location", "root", "source")

    def __init__(
        self, path: Path | str, root: Path, document_id: str, source: str = "memory"
    ) -> None:
        if type(path) is str:  # discovery's case, 10K times a no-op: one cheap test
            self.location, self._path = path, None
        else:
            self.location, self._path = os.fspath(path), Path(path)
        self.root = root
        self.document_id = document_id
        self.source = source

    def labelled(self, source: str) -> VaultFile:
        """The same file under another ``source`` label."""
        return VaultFile(self._path or self.location, self.root, self.document_id, source)

    @property
    def path(self) -> Path:
        if self._path is None:
            self._path = Path(self.location)
        return self._path

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, VaultFile):
            return NotImplemented
        return (self.location, self.root, self.document_id, self.source) == (
            other.location,
            other.root,
            other.document_id,
            other.source,
        )

    def __hash__(self) -> int:
        return hash((self.location, self.document_id))

    def __repr__(self) -> str:
        return f"VaultFile({self.location!r}, {self.root!r}, {self.document_id!r}, {self.source!r})"


class Selection:
    """Which files of a vault count: gitignore-style ``include`` and ``exclude`` patterns,
    tested on a file's path relative to its vault root (posix).

    When every include pattern is ``**/*.ext`` or ``*.ext`` (the default ``**/*.md`` and
    ``**/*.markdown``), a file is included when its name ends with one of the suffixes, or
    when a folder on its way down does (gitignore: ``*.md`` matches a folder ``x.md/`` and so
    everything in it): one ``str.endswith`` a file instead of a regex (~0.1 µs against ~1 µs).
    Otherwise the patterns' regexes, joined into one, are searched in the relative path."""

    def __init__(self, include: Sequence[str], exclude: Sequence[str] = ()) -> None:
        self.suffixes = _suffixes(include)
        self._included = _matcher(tuple(include))
        self._excluded = _matcher(tuple(exclude)) if exclude else None

    def folder_included(self, rel_dir: str) -> bool:
        """Whether a folder below the root (relative, posix, "" for the root) makes every
        file under it included, on the suffix path (always False on the regex path)."""
        suffixes = self.suffixes
        if not suffixes or not rel_dir:
            return False
        return any(part.endswith(suffixes) for part in rel_dir.split("/"))

    def matches(self, rel: str) -> bool:
        """The include patterns alone, by their joined regex."""
        return bool(self._included(rel))

    def excluded(self, rel: str) -> bool:
        return self._excluded is not None and bool(self._excluded(rel))

    @property
    def excludes(self) -> bool:
        return self._excluded is not None


_SUFFIX_PATTERN = re.compile(r"(?:\*\*/)?\*(\.[A-Za-z0-9_+-]+)")


def _suffixes(include: Sequence[str]) -> tuple[str, ...] | None:
    """The suffixes when every include pattern is ``**/*.ext`` or ``*.ext``, else None."""
    found = [_SUFFIX_PATTERN.fullmatch(p) for p in include]  # anything else: the regex
    if not found or not all(found):
        return None
    return tuple(m[1] for m in found if m)


@functools.lru_cache(maxsize=64)
def _matcher(patterns: tuple[str, ...]) -> Callable[[str], object]:
    """Whether a relative posix path matches gitignore-style ``patterns``. Without negations
    (the usual ``**/*.md``) that is any pattern's regex, joined into one: one match a file
    instead of pathspec's loop over pattern objects (~1 µs against ~6 µs). The answer is
    truthy or not (a match object, say). Kept per pattern list (it holds no state): every
    index run builds a ``Selection``, and parsing the patterns cost each run ~0.1-0.2 ms."""
    from pathspec import PathSpec  # on the first walk: a recall imports this module, never walks
    from pathspec.pattern import RegexPattern

    spec = PathSpec.from_lines("gitignore", patterns)
    active = [p for p in spec.patterns if p.include is not None]
    regexes = [p.regex for p in active if isinstance(p, RegexPattern) and p.include and p.regex]
    if len(regexes) == len(active):
        if not regexes:
            return lambda _rel: False
        return re.compile("|".join(f"(?:{r.pattern})" for r in regexes)).search
    return spec.match_file


class Listing(NamedTuple):
    """The files of one folder, as ``walk`` finds them: the folder (absolute, posix), its path
    relative to the vault root ("" for the root, else ending with "/") and its file entries
    (not hidden by a .gitignore, no link out of the root). An entry's ``stat()`` is taken
    relative to the open folder where the platform allows it (``fstatat``: no path to walk
    again from the file system's root, a third cheaper than ``os.stat`` of the full path);
    read it before the walk goes on to the next folder."""

    folder: str  # ends with "/"
    head: str
    files: list[os.DirEntry[str]]


_BY_FD = os.scandir in os.supports_fd and hasattr(os, "O_DIRECTORY")


def walk(root: Path, respect_gitignore: bool) -> Iterator[Listing]:
    """Every folder under ``root`` with its files, a folder at a time, by ``os.scandir``: its
    entries know what they are without another system call. Hidden folders (``.obsidian``,
    ``.trash``…) and tool folders are skipped; links to folders are not followed; a link to a
    file counts only when it points inside ``root``."""
    from pathspec import GitIgnoreSpec

    # Each folder carries the .gitignore files that apply to it: (the folder it lives in,
    # relative to root, and its spec); paths are compared as text, with no Path a file.
    pending: list[tuple[str, str, list[tuple[str, GitIgnoreSpec]]]] = [(root.as_posix(), "", [])]
    while pending:
        folder, rel_dir, ignores = pending.pop()
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY) if _BY_FD else None
        try:
            with os.scandir(folder if fd is None else fd) as listing:
                entries = list(listing)  # in any order: the caller sorts what it keeps
            if respect_gitignore and any(e.name == ".gitignore" and e.is_file() for e in entries):
                lines = Path(folder, ".gitignore").read_text(encoding="utf-8", errors="replace")
                ignores = [*ignores, (rel_dir, GitIgnoreSpec.from_lines(lines.splitlines()))]
            head = rel_dir + "/" if rel_dir else ""
            base = folder if folder.endswith("/") else folder + "/"
            subfolders = []
            files = []
            for entry in entries:
                if entry.is_dir():
                    name = entry.name
                    if (
                        not entry.is_symlink()
                        and not name.startswith(".")
                        and name not in ALWAYS_SKIPPED_DIRS
                        and not (ignores and _ignored(head + name, ignores, is_dir=True))
                    ):
                        subfolders.append((base + name, head + name, ignores))
                    continue
                if entry.is_symlink() and not _inside(base + entry.name, root):
                    continue  # never follow a link out of the vault
                if not (ignores and _ignored(head + entry.name, ignores, is_dir=False)):
                    files.append(entry)
            yield Listing(base, head, files)
        finally:
            if fd is not None:
                os.close(fd)
        pending.extend(reversed(subfolders))


def _inside(link: str, root: Path) -> bool:
    return Path(link).resolve().is_relative_to(root)


def _ignored(rel: str, ignores: list[tuple[str, GitIgnoreSpec]], *, is_dir: bool) -> bool:
    """Whether a .gitignore on the way down ignores ``rel`` (relative to the vault root); each
    spec sees the path relative to its own folder."""
    suffix = "/" if is_dir else ""
    for folder, spec in ignores:
        own = rel[len(folder) + 1 :] if folder else rel
        if spec.match_file(own + suffix):
            return True
    return False
