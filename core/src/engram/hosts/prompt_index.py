"""The per-prompt hook's keyword index: a snapshot of the live memories (their text and term
counts) in the project's ``.engram`` folder, so the hook that runs on every prompt answers
from one JSON file without pydantic, a store, an embedder or a worker process.

Written by whoever already holds the memories open (the detached capture, and a detached
refresh the prompt hook starts when the memory files changed since the snapshot was taken);
read by ``engram.hosts.prompt``. The snapshot is derived, like every index: deleting it costs
one prompt without memories. ``python -P -m engram.hosts.prompt_index JOB`` refreshes it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
import sys
import time
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts import quiet
from engram.hosts.job import HookJob
from engram.text.stopwords import STOPWORDS

if TYPE_CHECKING:
    from engram.memories.writer import Writer

SNAPSHOT = "prompt-index.json"  # in the project's .engram folder
REFRESHING = "prompt-index.refresh"  # a refresh was started at this file's mtime
REFRESH_GRACE = 120.0  # seconds a started refresh is trusted to be running
VERSION = 1
TEXT_LIMIT = 2000  # characters of a memory's body kept for the block
_WORD = re.compile(r"[^\W_]+")


def terms(text: str) -> list[str]:
    """The words a keyword match counts: lower case, no stop words, a plural's ``s`` dropped."""
    found = []
    for word in _WORD.findall(text.lower()):
        if len(word) < 2 or word in STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        found.append(word)
    return found


def snapshot_path(project: Path) -> Path:
    return project / ".engram" / SNAPSHOT


def files_digest(folders: list[Path]) -> str:
    """The memory files' stats (markdown only; the folders' own ``.engram`` bookkeeping, such as
    the access log a recall writes, is left out so reading does not make the snapshot stale)."""
    found: list[Any] = []
    for folder in folders:
        for top, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if name.lower().endswith((".md", ".markdown")):
                    path = os.path.join(top, name)
                    with contextlib.suppress(OSError):
                        st = os.stat(path)
                        found.append([path, st.st_mtime_ns, st.st_size])
    return hashlib.sha256(json.dumps(found).encode()).hexdigest()


def build(writer: Writer, job: HookJob) -> dict[str, Any]:
    """The snapshot of every live memory the writer sees (project, user and external folders),
    digests taken before the files are read so a change made meanwhile shows as stale."""
    from engram.ingest.document_ids import document_path
    from engram.memories.agent import list_memories
    from engram.memories.files import read_body
    from engram.memories.scopes import memory_folders
    from engram.text.redact import strip_private

    folders = [f.path for f in memory_folders(writer.config)]
    settings = quiet.settings_digest(job)
    tree = files_digest(folders)
    items: list[dict[str, Any]] = []
    for info in list_memories(writer):
        try:
            body = read_body(document_path(info.path, writer.config.root))
        except OSError:
            continue
        text = " ".join(strip_private(body).split())[:TEXT_LIMIT]
        if text:
            items.append({"id": info.id, "path": info.path, "title": info.title, "text": text})
    return {
        "version": VERSION,
        "settings": settings,
        "folders": [str(f) for f in folders],
        "tree": tree,
        **scored(items),
    }


def scored(items: list[dict[str, Any]]) -> dict[str, Any]:
    """BM25's tables over ``items`` (their title and text): each item's term counts and
    length (added to it), every term's idf, the average length."""
    df: Counter[str] = Counter()
    for item in items:
        tf = Counter(terms(f"{item.get('title') or ''} {item['text']}"))
        item["tf"] = dict(tf)
        item["length"] = sum(tf.values())
        df.update(tf.keys())
    n = len(items)
    return {
        "idf": {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()},
        "average_length": (sum(i["length"] for i in items) / n) if n else 0.0,
        "items": items,
    }


def write(project: Path, snapshot: dict[str, Any]) -> None:
    """Replace the snapshot atomically (a reader sees the old one or the new one)."""
    path = snapshot_path(project)
    with contextlib.suppress(OSError):  # only a shortcut: without it a prompt gets no memories
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{SNAPSHOT}.{os.getpid()}")
        temp.write_text(json.dumps(snapshot, ensure_ascii=False), encoding="utf-8")
        os.replace(temp, path)


def refresh_if_stale(writer: Writer, job: HookJob) -> None:
    """Write the snapshot unless the one on disk still matches the files and settings."""
    project = job.project
    current = load(project)
    if current is not None and fresh(current, job):
        return
    write(project, build(writer, job))


def load(project: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(snapshot_path(project).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("version") != VERSION:
        return None
    return data


def fresh(snapshot: dict[str, Any], job: HookJob) -> bool:
    """Whether the snapshot still matches every input, by stats alone."""
    try:
        folders = [Path(f) for f in snapshot["folders"]]
        return bool(
            snapshot["settings"] == quiet.settings_digest(job)
            and snapshot["tree"] == files_digest(folders)
        )
    except (KeyError, TypeError, OSError):
        return False


def spawn_refresh(job: HookJob) -> None:
    """Start a detached refresh (at most one per project at a time); returns at once."""
    project = job.project
    marker = project / ".engram" / REFRESHING
    with contextlib.suppress(OSError):
        if time.time() - marker.stat().st_mtime < REFRESH_GRACE:
            return
    import subprocess  # here: the prompt hook imports it only when it refreshes

    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
        argv = [sys.executable, "-P", "-m", "engram.hosts.prompt_index", job.dumps()]
        options: dict[str, Any] = (
            {"start_new_session": True}
            if os.name == "posix"
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        )
        subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=project,
            close_fds=True,
            **options,
        )
    except OSError:
        return


def main() -> int:
    """The detached refresh: open the memories as the worker does, write the snapshot."""
    from engram.config import load_config
    from engram.memory import Memory

    job = HookJob.loads(sys.argv[1])
    project = job.project
    try:
        config = load_config(job.overrides or None, project_file=job.config_file, start=project)
        with Memory.open(config) as memory:
            refresh_if_stale(memory.writer, job)
    except Exception:  # nobody to tell: the next prompt tries again after the grace period
        return 0
    finally:
        with contextlib.suppress(OSError):
            (project / ".engram" / REFRESHING).unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
