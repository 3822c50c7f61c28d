"""The session-start hook's shortcut when there is nothing to recall: after a recall that found
no memory, the worker leaves a stamp of everything that recall read (the config files, the
variables that steer config, the overrides, the memory folders' files). The next session start
compares stats with it and, when nothing changed, answers "nothing" without loading the config,
pydantic, a store or an embedder, nor starting the worker. Any change, and any failure to read
the stamp, takes the full path; so does a worker (recall or capture) that failed since the last
one that worked: the full path then says why (a config or store broken since the stamp)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from pathlib import Path
from typing import Any

from engram.config_files import find_project_file, user_config_path

STAMP = "recall.empty"  # in the project's .engram folder
FAILED = "worker.failed"  # beside it: the last worker that ran here failed
ENV_PREFIXES = ("ENGRAM_", "XDG_", "HOME", "CLAUDE_CONFIG_DIR")


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_mtime_ns, st.st_size, st.st_ino]


def _tree(folder: Path) -> list[Any]:
    """Every file and folder under ``folder`` with its stat (the folder's own mtime too, so a
    file added or removed shows)."""
    found: list[Any] = [str(folder), _stat(folder)]
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files + dirs):
            path = Path(top) / name
            found.append([str(path), _stat(path)])
    return found


def settings_digest(job: dict[str, Any]) -> str:
    """What decides the config: its files' stats, the variables that steer it, the overrides."""
    project = job.get("config_file")
    try:
        found = Path(project) if project else find_project_file(Path(job["project"]))
    except Exception:  # ENGRAM_CONFIG naming no file: let the full path say so
        found = None
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))
    user = user_config_path()
    overrides = job.get("overrides") or {}
    return _digest([str(found), found and _stat(found), str(user), _stat(user), env, overrides])


def folders_digest(folders: list[Path]) -> str:
    return _digest([_tree(folder) for folder in folders])


def _digest(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def stamp_path(job: dict[str, Any]) -> Path:
    return Path(job["project"]) / ".engram" / STAMP


def write(job: dict[str, Any], settings: str, folders: list[Path], tree: str) -> None:
    """Record that a recall over these inputs found nothing (digests taken before it read)."""
    path = stamp_path(job)
    body = {"settings": settings, "folders": [str(f) for f in folders], "tree": tree}
    with contextlib.suppress(OSError):  # only a shortcut: without it the next start is slower
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{STAMP}.{os.getpid()}")
        temp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(temp, path)


def forget(job: dict[str, Any]) -> None:
    with contextlib.suppress(OSError):
        stamp_path(job).unlink(missing_ok=True)


def note_outcome(job: dict[str, Any], ok: bool) -> None:
    """Remember whether the last worker of this project worked (``healthy`` reads it)."""
    marker = Path(job["project"]) / ".engram" / FAILED
    with contextlib.suppress(OSError):  # only a shortcut's guard: without it, starts are slower
        if ok:
            marker.unlink(missing_ok=True)
        else:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()


def healthy(job: dict[str, Any]) -> bool:
    """No worker failed here since the last one that worked (a shortcut may answer for it)."""
    return not (Path(job["project"]) / ".engram" / FAILED).exists()


def nothing_to_recall(job: dict[str, Any]) -> bool:
    """Whether the stamp holds and still matches every input, by stats alone."""
    if not healthy(job):
        return False
    try:
        body = json.loads(stamp_path(job).read_text(encoding="utf-8"))
        folders = [Path(f) for f in body["folders"]]
        return bool(
            body["settings"] == settings_digest(job) and body["tree"] == folders_digest(folders)
        )
    except (OSError, ValueError, KeyError, TypeError):
        return False
