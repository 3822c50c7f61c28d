"""The session-start hook's shortcut: after a recall, the worker leaves a stamp of everything that
recall read (the config files, the variables that steer config, the overrides, the memory
folders' files) and the block it made. The next session start compares stats with it and, when
nothing changed, answers with that block (or nothing) without loading the config, pydantic, a
store or an embedder, nor starting the worker: the session-start block is a function of those
inputs alone (the live memories' files, newest first; no query, no clock). Any change, and any
failure to read the stamp, takes the full path; so does a worker (recall or capture) that
failed since the last one that worked (the full path then says why: a config or store broken
since the stamp), and a recall that had something to say besides its block (a warning).

What a full recall also does, the shortcut hands on: the memories shown are marked seen for the
session (the per-prompt hook skips them) and their accesses are left in a small file for the
capture the hook starts next (or the one already running) to count, off the host's clock."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.locations import find_project_file, user_config_path

if TYPE_CHECKING:
    from engram.hosts.job import HookJob

STAMP = "recall.stamp"  # in the project's .engram folder
FORMAT = 2  # of the stamp and the block it keeps: a stamp of another format is not used
FAILED = "worker.failed"  # beside it: the last worker that ran here failed
RECALLED = "recalled.pending"  # beside it: accesses of served blocks, for the capture to count
ENV_PREFIXES = ("ENGRAM_", "XDG_", "HOME", "CLAUDE_CONFIG_DIR")


@dataclass(frozen=True)
class Cached:
    """The last recall's block, still true: its text ("" for nothing to recall), the memory ids
    and paths it showed, and the (path, memory id) pairs whose accesses it counts."""

    text: str
    shown: list[str]
    recalled: list[list[str]]


def _stat(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    # ctime too: an edit of the same size with its mtime put back still shows (as git's index)
    return [st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino]


def _tree(folder: Path) -> list[Any]:
    """Every file and folder under ``folder`` with its stat (the folder's own mtime too, so a
    file added or removed shows). Hidden folders are left out: ``.engram`` there holds the
    access counts a recall itself updates, never a memory."""
    found: list[Any] = [str(folder), _stat(folder)]
    for top, dirs, files in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files + dirs):
            path = Path(top) / name
            found.append([str(path), _stat(path)])
    return found


def settings_digest(job: HookJob) -> str:
    """What decides the config: its files' stats, the variables that steer it, the overrides."""
    try:
        found = job.config_file or find_project_file(job.project)
    except Exception:  # ENGRAM_CONFIG naming no file: let the full path say so
        found = None
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith(ENV_PREFIXES))
    user = user_config_path()
    overrides = job.overrides
    return _digest([str(found), found and _stat(found), str(user), _stat(user), env, overrides])


def folders_digest(folders: list[Path]) -> str:
    return _digest([_tree(folder) for folder in folders])


def _digest(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def stamp_path(job: HookJob) -> Path:
    return job.project / ".engram" / STAMP


def write(
    job: HookJob,
    settings: str,
    folders: list[Path],
    tree: str,
    recalled: Cached = Cached("", [], []),
) -> None:
    """Record what a recall over these inputs gave (digests taken before it read them)."""
    path = stamp_path(job)
    body = {
        "format": FORMAT,
        "settings": settings,
        "folders": [str(f) for f in folders],
        "tree": tree,
        "text": recalled.text,
        "shown": recalled.shown,
        "recalled": recalled.recalled,
    }
    with contextlib.suppress(OSError):  # only a shortcut: without it the next start is slower
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{STAMP}.{os.getpid()}")
        temp.write_text(json.dumps(body), encoding="utf-8")
        os.replace(temp, path)


def forget(job: HookJob) -> None:
    with contextlib.suppress(OSError):
        stamp_path(job).unlink(missing_ok=True)


def note_outcome(job: HookJob, ok: bool) -> None:
    """Remember whether the last worker of this project worked (``healthy`` reads it)."""
    marker = job.project / ".engram" / FAILED
    with contextlib.suppress(OSError):  # only a shortcut's guard: without it, starts are slower
        if ok:
            marker.unlink(missing_ok=True)
        else:
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()


def healthy(job: HookJob) -> bool:
    """No worker failed here since the last one that worked (a shortcut may answer for it)."""
    return not (job.project / ".engram" / FAILED).exists()


def cached(job: HookJob) -> Cached | None:
    """The last recall's block when the stamp holds and still matches every input, by stats
    alone; None otherwise."""
    if not healthy(job):
        return None
    try:
        body = json.loads(stamp_path(job).read_text(encoding="utf-8"))
        folders = [Path(f) for f in body["folders"]]
        if body.get("format") != FORMAT or body["settings"] != settings_digest(job):
            return None
        if body["tree"] != folders_digest(folders):
            return None
        text, shown, recalled = body["text"], body["shown"], body["recalled"]
        if not isinstance(text, str) or not isinstance(shown, list):
            return None
        pairs = [list(map(str, p)) for p in recalled if isinstance(p, list) and len(p) == 2]
        return Cached(text, [str(k) for k in shown], pairs)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return None


def nothing_to_recall(job: HookJob) -> bool:
    """Whether the stamp holds, still matches every input, and its recall found nothing."""
    found = cached(job)
    return found is not None and not found.text


def note_recalled(job: HookJob, pairs: list[list[str]]) -> None:
    """Leave the (path, memory id) pairs a served block showed for the next capture to count
    (one JSON line per start; appends are atomic at this size)."""
    if not pairs:
        return
    path = job.project / ".engram" / RECALLED
    # usage statistics: never worth failing a start
    with contextlib.suppress(OSError), path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(pairs) + "\n")


def take_recalled(project: Path) -> list[tuple[str, str]]:
    """The pairs left by served blocks since the last capture, taken (the file moved aside
    first, so a start appending meanwhile writes a new file the next capture takes)."""
    source = project / ".engram" / RECALLED
    taken = source.with_name(f"{RECALLED}.{os.getpid()}")
    try:
        os.replace(source, taken)
    except OSError:
        return []
    pairs: list[tuple[str, str]] = []
    with contextlib.suppress(OSError):  # unreadable: these counts are lost, nothing else
        for line in taken.read_text(encoding="utf-8").splitlines():
            with contextlib.suppress(ValueError, TypeError):
                pairs += [(str(p), str(m)) for p, m in json.loads(line)]
    with contextlib.suppress(OSError):
        taken.unlink()
    return pairs
