"""A document id and the file it names, both ways in one place: the vault's discovery writes
ids, the memory write path reads them back as paths, and the two must agree."""

from __future__ import annotations

from pathlib import Path


def document_id_for(path: Path, project_root: Path) -> str:
    """Paths inside the project are stored relative to it (portable); others absolutely."""
    return relative_id(path, project_root.resolve())


def relative_id(path: Path | str, resolved_root: Path | str) -> str:
    """``document_id_for`` with the project root already resolved (once per discovery, not per
    file), by string: a no-op re-index must cost little more than a stat per file."""
    text = path if isinstance(path, str) else path.as_posix()
    root = resolved_root if isinstance(resolved_root, str) else resolved_root.as_posix()
    if text == root:
        return "."
    prefix = root if root.endswith("/") else root + "/"
    return text[len(prefix) :] if text.startswith(prefix) else text


def document_path(document_id: str, project_root: Path) -> Path:
    """The file a memory document id names (ids are project-relative, or absolute outside)."""
    path = Path(document_id)
    return path if path.is_absolute() else project_root / path
