"""The session-start hook's shortcut before any stamp exists (``quiet``), as on the first
session in a new project: when the memory folders the config names hold no memory file, the
recall has nothing to say, so the hook answers nothing and writes the stamp itself, without
pydantic, a store or a worker.

The folders are read from the config files with ``tomllib`` and derived as ``EngramConfig``
and ``engram.memories.scopes.memory_folders`` derive them
(core/tests/hosts/test_hooks_first_start.py proves them equal for every shape taken here). Whatever
the shortcut cannot read surely takes the full path: overrides, an ``ENGRAM_*`` variable that may
steer config, a file that is no TOML, a top-level key that is no section, a ``[memory]`` key or
value of another shape, any error, and a worker that failed since the last one that worked. The
config's other sections are not validated here: a config that parses but is invalid is answered with
nothing once, its capture (started right after) fails and says so in the capture log, and that
failure sends the next start down the full path, which reports it."""

from __future__ import annotations

import os
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts import quiet
from engram.locations import default_user_dir, find_project_file, user_config_path

if TYPE_CHECKING:
    from engram.hosts.job import HookJob

# EngramConfig's sections ("root" is no section: a file that sets it takes the full path).
SECTIONS = frozenset(
    {
        "store",
        "embedder",
        "extractor",
        "vault",
        "chunking",
        "search",
        "cache",
        "memory",
        "sessions",
        "recall",
        "lifecycle",
        "origin",
        "capture",
    }
)
# MemoryFolderConfig's keys and the TOML type each is read from here.
MEMORY_KEYS: dict[str, type] = {
    "dir": str,
    "user_dir": str,
    "user_scope": bool,
    "external_paths": list,
    "collections_dir": str,
    "on_collision": str,  # read, not used: it names no folder
}
DEFAULT_DIR = "memory"
# Read by engram.locations to find the files, never as settings.
FILE_VARIABLES = frozenset({"ENGRAM_CONFIG", "ENGRAM_USER_CONFIG"})
MEMORY_SUFFIXES = (".md", ".markdown")


def nothing_to_recall(job: HookJob) -> bool:
    """Whether the memory folders hold no memory file (then the stamp is written, as a worker
    that found nothing writes it); False whenever that cannot be told cheaply and surely."""
    try:
        if not quiet.healthy(job):
            return False
        settings = quiet.settings_digest(job)  # before the files are read: a later edit shows
        folders = memory_folders(job)
        if folders is None:
            return False
        tree = quiet.folders_digest(folders)  # before they are looked into
        if any(_holds_memory(folder) for folder in folders):
            return False
        quiet.write(job, settings, folders, tree)
        return True
    except Exception:  # any doubt: the full path decides, and says what is wrong
        return False


def memory_folders(job: HookJob) -> list[Path] | None:
    """The resolved memory folders ``memory_folders(load_config(...))`` gives for this job
    (project, user, external; each once), or None when the files say more than is read here."""
    if job.overrides or _steered(os.environ):
        return None
    explicit = job.config_file
    project = explicit.resolve() if explicit else find_project_file(job.project)
    if project is not None and not project.is_file():
        return None
    memory: dict[str, Any] = {}
    for path in (user_config_path(), project):  # lowest precedence first, as load_config
        if path is None or not path.is_file():
            continue
        table = _memory_table(path)
        if table is None:
            return None
        memory |= table
    root = project.parent if project else job.project.resolve()
    return _folders(memory, root)


def _steered(names: Iterable[str]) -> bool:
    """An ``ENGRAM_*`` variable (any case, as pydantic-settings reads them) that is a setting."""
    return any(name.upper().startswith("ENGRAM_") and name not in FILE_VARIABLES for name in names)


def _memory_table(path: Path) -> dict[str, Any] | None:
    """The file's ``[memory]`` table, or None unless the file is TOML of the shape read here."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    if not set(data) <= SECTIONS or not all(isinstance(v, dict) for v in data.values()):
        return None
    memory: dict[str, Any] = data.get("memory", {})
    for key, value in memory.items():
        kind = MEMORY_KEYS.get(key)
        if kind is None or not isinstance(value, kind):
            return None
        if isinstance(value, list) and not all(isinstance(v, str) for v in value):
            return None
    return memory


def _folders(memory: dict[str, Any], root: Path) -> list[Path]:
    """As ``engram.memories.scopes.memory_folders``: project folder, user folder, external ones."""

    def resolve(raw: str) -> Path:  # EngramConfig.resolve, then resolved as the scopes do
        path = Path(raw).expanduser()
        return (path if path.is_absolute() else root / path).resolve()

    folders = [resolve(memory.get("dir", DEFAULT_DIR))]
    if memory.get("user_scope", True):
        user_dir = memory.get("user_dir")
        folders.append(resolve(user_dir) if user_dir is not None else default_user_dir().resolve())
    folders += [resolve(raw) for raw in memory.get("external_paths", [])]
    return list(dict.fromkeys(folders))  # each once, in order


def _holds_memory(folder: Path) -> bool:
    """Any markdown file under ``folder``, hidden ones too (more than the recall reads; an
    unreadable subfolder raises, so the full path decides)."""

    def fail(exc: OSError) -> None:
        raise exc

    if not folder.is_dir():  # as engram.memories.files.memory_files: no folder, no memory
        return False
    for _, _, files in os.walk(folder, onerror=fail):
        if any(name.lower().endswith(MEMORY_SUFFIXES) for name in files):
            return True
    return False
