"""Where memories live: the project's memory folder, the user's (shared by every project) and
external folders engram only reads.

- ``project`` (``[memory] dir``, default ``memory/``): written unless asked otherwise.
- ``user`` (``[memory] user_dir``, default ``$XDG_DATA_HOME/engram/memory``, i.e.
  ``~/.local/share/engram/memory``): preferences and facts true in every project; written with
  ``scope="user"``. ``[memory] user_scope = false`` leaves it out entirely.
- ``external`` (``[memory] external_paths``): other folders of markdown (a team's shared notes,
  another tool's memory) that search and recall read. Nothing engram does ever writes there:
  a write, an update, a supersede or a prune aimed at one is refused with ``ReadOnlyMemory``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, get_args

from engram.config import EngramConfig
from engram.errors import UnsafePath
from engram.locations import default_user_dir as default_user_dir  # re-exported

Scope = Literal["user", "project"]
SCOPES: tuple[Scope, ...] = get_args(Scope)
FolderScope = Literal["project", "user", "external"]


class ReadOnlyMemory(UnsafePath):
    """A write was aimed at an external memory folder, which engram only reads."""


@dataclass(frozen=True, slots=True)
class MemoryFolder:
    """One folder of memories, resolved (symlinks followed), and whether engram writes there."""

    scope: FolderScope
    path: Path

    @property
    def writable(self) -> bool:
        return self.scope != "external"

    def holds(self, path: Path) -> bool:
        return path == self.path or path.is_relative_to(self.path)


def memory_folders(config: EngramConfig) -> list[MemoryFolder]:
    """The project folder first, then the user folder, then external ones (each once)."""
    cfg = config.memory
    folders = [MemoryFolder("project", config.resolve(cfg.dir).resolve())]
    if cfg.user_scope:
        user = config.resolve(cfg.user_dir).resolve() if cfg.user_dir else default_user_dir()
        folders.append(MemoryFolder("user", user.resolve()))
    for raw in cfg.external_paths:
        folders.append(MemoryFolder("external", config.resolve(raw).resolve()))
    unique: list[MemoryFolder] = []
    for folder in folders:
        if all(folder.path != seen.path for seen in unique):
            unique.append(folder)
    return unique


def folder_of(folders: Sequence[MemoryFolder], path: Path) -> MemoryFolder | None:
    """The folder ``path`` (resolved) lies in; the deepest one when folders nest."""
    holding = [f for f in folders if f.holds(path)]
    return max(holding, key=lambda f: len(f.path.parts), default=None)


def writable_folder(folders: Sequence[MemoryFolder], scope: str) -> MemoryFolder:
    """The folder a memory of ``scope`` is written to."""
    if scope not in SCOPES:
        raise UnsafePath(f"unknown scope {scope!r}; use one of {', '.join(SCOPES)}")
    for folder in folders:
        if folder.scope == scope:
            return folder
    raise UnsafePath(
        f"there is no {scope} memory folder: [memory] user_scope is false; set it to true, or "
        "write with scope project"
    )


def check_writable(folders: Sequence[MemoryFolder], path: Path, raw: str | None = None) -> None:
    """Refuse a write to ``path`` unless it lies in a writable memory folder."""
    folder = folder_of(folders, path)
    shown = raw or str(path)
    if folder is None:
        where = ", ".join(str(f.path) for f in folders if f.writable)
        raise UnsafePath(f"{shown} is outside the memory folders ({where}); refused")
    if not folder.writable:
        raise ReadOnlyMemory(
            f"{shown} is in the external memory folder {folder.path}, which engram only reads; "
            "copy what you want to change into the project's memory folder (engram remember)"
        )
