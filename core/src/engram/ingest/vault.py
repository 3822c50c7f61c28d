"""Finding the markdown files of a vault: include/exclude globs, .gitignore, hidden folders.

Discovery only lists paths; reading, hashing and deciding what changed is ``sync``'s job.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from engram.document_ids import relative_id as _relative_id
from engram.errors import ConfigError

if TYPE_CHECKING:  # pathspec loads on the first walk: a recall imports this module, never walks
    from pathspec import GitIgnoreSpec

ALWAYS_SKIPPED_DIRS = frozenset({".git", ".engram", ".venv", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class VaultFile:
    path: Path  # absolute, resolved
    root: Path  # the vault root it was found under (absolute, resolved)
    document_id: str


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
    from pathspec import PathSpec

    include_spec = PathSpec.from_lines("gitignore", include)
    exclude_spec = PathSpec.from_lines("gitignore", exclude)
    found: dict[Path, VaultFile] = {}
    project = project_root.resolve().as_posix()
    for raw_root in roots:
        root = raw_root.expanduser().resolve()
        if not root.exists():
            raise ConfigError(
                f"vault path {raw_root} does not exist; check vault.paths or the path you gave"
            )
        if root.is_file():
            found.setdefault(root, VaultFile(root, root.parent, _relative_id(root, project)))
            continue
        excluding = bool(exclude)
        for full, rel in _walk(root, respect_gitignore):
            if include_spec.match_file(rel) and not (excluding and exclude_spec.match_file(rel)):
                path = Path(full)
                posix = full if os.sep == "/" else full.replace(os.sep, "/")
                found.setdefault(path, VaultFile(path, root, _relative_id(posix, project)))
    return sorted(found.values(), key=lambda f: f.document_id)


def _walk(root: Path, respect_gitignore: bool) -> Iterator[tuple[str, str]]:
    """(path, path relative to ``root``, both posix strings) of every file, by ``os.scandir``:
    its entries know what they are without another system call. Links to folders are not
    followed; a link to a file counts only when it points inside ``root``."""
    from pathspec import GitIgnoreSpec

    # Each folder carries the .gitignore files that apply to it: (folder it lives in, spec).
    base = root.as_posix()
    pending: list[tuple[str, str, list[tuple[Path, GitIgnoreSpec]]]] = [(base, "", [])]
    while pending:
        folder, rel_dir, ignores = pending.pop()
        with os.scandir(folder) as listing:
            entries = sorted(listing, key=lambda e: e.name)
        if respect_gitignore and any(e.name == ".gitignore" and e.is_file() for e in entries):
            here = Path(folder)
            lines = (here / ".gitignore").read_text(encoding="utf-8", errors="replace")
            ignores = [*ignores, (here, GitIgnoreSpec.from_lines(lines.splitlines()))]
        subfolders = []
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            if entry.is_dir():
                if (
                    not entry.is_symlink()
                    and not entry.name.startswith(".")
                    and entry.name not in ALWAYS_SKIPPED_DIRS
                    and not (ignores and _ignored(Path(entry.path), ignores, is_dir=True))
                ):
                    subfolders.append((entry.path, rel, ignores))
                continue
            if entry.is_symlink() and not Path(entry.path).resolve().is_relative_to(root):
                continue  # never follow a link out of the vault
            if not (ignores and _ignored(Path(entry.path), ignores, is_dir=False)):
                yield entry.path, rel
        pending.extend(reversed(subfolders))


def _ignored(path: Path, ignores: list[tuple[Path, GitIgnoreSpec]], *, is_dir: bool) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False
