"""Finding the markdown files of a vault: include/exclude globs, .gitignore, hidden folders.

Discovery only lists paths; reading, hashing and deciding what changed is ``sync``'s job.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from engram.document_ids import relative_id as _relative_id
from engram.errors import ConfigError
from engram.ingest.bulk import gc_paused

if TYPE_CHECKING:  # pathspec loads on the first walk: a recall imports this module, never walks
    from pathspec import GitIgnoreSpec

ALWAYS_SKIPPED_DIRS = frozenset({".git", ".engram", ".venv", "node_modules", "__pycache__"})


class VaultFile:
    """A file found in a vault: where it is (absolute, resolved), the vault root it was found
    under (absolute, resolved), its document id and the index's ``source`` label for it
    (``engram.sources``: discovery cannot tell a memory folder from the vault, so
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


def discover(
    roots: Sequence[Path],
    *,
    project_root: Path,
    include: Sequence[str],
    exclude: Sequence[str] = (),
    respect_gitignore: bool = True,
) -> list[VaultFile]:
    """Every file under ``roots`` that matches ``include``, not ``exclude``, not git-ignored.

    A root that is a file is taken as given. Hidden folders (``.obsidian``, ``.trash``…) and
    tool folders are skipped. The result is sorted and free of duplicates.
    """
    with gc_paused():  # many small records, no cycles (see engram.ingest.bulk)
        return _discover(roots, project_root, include, exclude, respect_gitignore)


def _discover(
    roots: Sequence[Path],
    project_root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    respect_gitignore: bool,
) -> list[VaultFile]:
    included = _matcher(include)
    excluded = _matcher(exclude) if exclude else None
    # (document id, path, root) of each file; the id names the file (one id, one path), so
    # sorting the tuples sorts by id, and the first root to find a file keeps it.
    found: list[tuple[str, str, Path]] = []
    project = project_root.resolve().as_posix()
    for raw_root in roots:
        root = raw_root.expanduser().resolve()
        if not root.exists():
            raise ConfigError(
                f"vault path {raw_root} does not exist; check vault.paths or the path you gave"
            )
        if root.is_file():
            found.append((_relative_id(root, project), os.fspath(root), root.parent))
            continue
        # A file's id is the root's id and its path below the root: one concatenation a file,
        # since this loop is most of what a no-op re-index does besides a stat a file.
        base = _relative_id(root, project)
        prefix = "" if base == "." else base if base.endswith("/") else base + "/"
        for folder in _walk(root, respect_gitignore):
            found += [
                (prefix + rel, full, root)
                for full, rel in folder
                if included(rel) and not (excluded and excluded(rel))
            ]
    if len(roots) > 1:
        found = list(
            {doc_id: (doc_id, full, root) for doc_id, full, root in reversed(found)}.values()
        )
    found.sort()
    return [VaultFile(full, root, doc_id) for doc_id, full, root in found]


def _matcher(patterns: Sequence[str]) -> Callable[[str], object]:
    """Whether a relative posix path matches gitignore-style ``patterns``. Without negations
    (the usual ``**/*.md``) that is any pattern's regex, joined into one: one match a file
    instead of pathspec's loop over pattern objects (~1 µs against ~6 µs). The answer is
    truthy or not (a match object, say)."""
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


def _walk(root: Path, respect_gitignore: bool) -> Iterator[list[tuple[str, str]]]:
    """(path, path relative to ``root``, both posix strings) of every file, a folder at a time
    (one generator step a folder, not a file), by ``os.scandir``: its entries know what they
    are without another system call. Links to folders are not followed; a link to a file
    counts only when it points inside ``root``."""
    from pathspec import GitIgnoreSpec

    # Each folder carries the .gitignore files that apply to it: (the folder it lives in,
    # relative to root, and its spec); paths are compared as text, with no Path a file.
    base = root.as_posix()
    pending: list[tuple[str, str, list[tuple[str, GitIgnoreSpec]]]] = [(base, "", [])]
    while pending:
        folder, rel_dir, ignores = pending.pop()
        with os.scandir(folder) as listing:
            entries = list(listing)  # in any order: discover sorts what it found
        if respect_gitignore and any(e.name == ".gitignore" and e.is_file() for e in entries):
            lines = Path(folder, ".gitignore").read_text(encoding="utf-8", errors="replace")
            ignores = [*ignores, (rel_dir, GitIgnoreSpec.from_lines(lines.splitlines()))]
        subfolders = []
        files = []
        head = rel_dir + "/" if rel_dir else ""
        for entry in entries:
            rel = head + entry.name
            if entry.is_dir():
                if (
                    not entry.is_symlink()
                    and not entry.name.startswith(".")
                    and entry.name not in ALWAYS_SKIPPED_DIRS
                    and not (ignores and _ignored(rel, ignores, is_dir=True))
                ):
                    subfolders.append((entry.path, rel, ignores))
                continue
            if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(root):
                continue  # never follow a link out of the vault
            if not (ignores and _ignored(rel, ignores, is_dir=False)):
                files.append((entry.path, rel))
        yield files
        pending.extend(reversed(subfolders))


def _ignored(rel: str, ignores: list[tuple[str, GitIgnoreSpec]], *, is_dir: bool) -> bool:
    """Whether a .gitignore on the way down ignores ``rel`` (relative to the vault root); each
    spec sees the path relative to its own folder."""
    suffix = "/" if is_dir else ""
    for folder, spec in ignores:
        own = rel[len(folder) + 1 :] if folder else rel
        if spec.match_file(own + suffix):
            return True
    return False
