"""Finding the markdown files of a vault: include/exclude globs, .gitignore, hidden folders.

Discovery only lists paths; reading, hashing and deciding what changed is ``sync``'s job.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from pathspec import GitIgnoreSpec, PathSpec

from engram.errors import ConfigError

ALWAYS_SKIPPED_DIRS = frozenset({".git", ".engram", ".venv", "node_modules", "__pycache__"})


@dataclass(frozen=True)
class VaultFile:
    path: Path  # absolute, resolved
    root: Path  # the vault root it was found under (absolute, resolved)
    document_id: str


def document_id_for(path: Path, project_root: Path) -> str:
    """Paths inside the project are stored relative to it (portable); others absolutely."""
    return _relative_id(path, project_root.resolve())


def _relative_id(path: Path, resolved_root: Path) -> str:
    """``document_id_for`` with the project root already resolved (once per discovery, not per
    file: resolving is a system call per path component)."""
    try:
        return path.relative_to(resolved_root).as_posix()
    except ValueError:
        return path.as_posix()


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
    include_spec = PathSpec.from_lines("gitignore", include)
    exclude_spec = PathSpec.from_lines("gitignore", exclude)
    found: dict[Path, VaultFile] = {}
    project = project_root.resolve()
    for raw_root in roots:
        root = raw_root.expanduser().resolve()
        if not root.exists():
            raise ConfigError(
                f"vault path {raw_root} does not exist; check vault.paths or the path you gave"
            )
        if root.is_file():
            found.setdefault(root, VaultFile(root, root.parent, _relative_id(root, project)))
            continue
        for path in _walk(root, respect_gitignore):
            rel = path.relative_to(root).as_posix()
            if include_spec.match_file(rel) and not exclude_spec.match_file(rel):
                found.setdefault(path, VaultFile(path, root, _relative_id(path, project)))
    return sorted(found.values(), key=lambda f: f.document_id)


def _walk(root: Path, respect_gitignore: bool) -> Iterator[Path]:
    # Each entry: (folder the .gitignore lives in, its spec); nested files add to the stack.
    ignores: list[tuple[Path, GitIgnoreSpec]] = []
    for folder, dirs, files in os.walk(root, followlinks=False):
        here = Path(folder)
        ignores = [(base, spec) for base, spec in ignores if here == base or base in here.parents]
        if respect_gitignore and (here / ".gitignore").is_file():
            lines = (here / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
            ignores.append((here, GitIgnoreSpec.from_lines(lines)))
        dirs[:] = sorted(
            d
            for d in dirs
            if not d.startswith(".")
            and d not in ALWAYS_SKIPPED_DIRS
            and not _ignored(here / d, ignores, is_dir=True)
        )
        for name in sorted(files):
            path = here / name
            if path.is_symlink() and not path.resolve().is_relative_to(root):
                continue  # never follow a link out of the vault
            if not _ignored(path, ignores, is_dir=False):
                yield path


def _ignored(path: Path, ignores: list[tuple[Path, GitIgnoreSpec]], *, is_dir: bool) -> bool:
    for base, spec in ignores:
        rel = path.relative_to(base).as_posix() + ("/" if is_dir else "")
        if spec.match_file(rel):
            return True
    return False
