"""Capture that outlives the host: hosts kill a session-end hook on exit (Claude Code gives it
little time), so the hook only starts this process and returns. It runs in its own session
(a signal to the host's process group does not reach it), writes to the project's capture log,
holds a lock so two captures of one project never run at once, and gives the work its own time
cap (the worker is killed, with everything it started, when it runs over).

A hook that finds the lock taken leaves a marker instead; the running capture sees it when it
finishes and goes round once more, so the later session's turns are not left behind.
``python -P -m engram.hosts.detached JOB`` (JOB: the worker's job as JSON)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from engram.hosts.child import run_worker
from engram.hosts.events import CAPTURE_TIMEOUT
from engram.hosts.job import HookJob

__all__ = ["CAPTURE_TIMEOUT", "pending", "run", "spawn", "state_dir"]

ROUNDS = 3  # at most this many rounds when later hooks asked for more while one ran
LOCK = "capture.lock"
PID = "capture.pid"
AGAIN = "capture.again"
LOG = "capture.log"
DONE = "capture.done"  # touched after each good round, its mtime the time that round began


def state_dir(project: Path) -> Path:
    """Where the lock, pid file, marker and log live: the project's ``.engram`` folder."""
    return project / ".engram"


def spawn(job: HookJob, project: Path) -> subprocess.Popen[bytes]:
    """Start the detached capture for ``project``; returns at once."""
    folder = state_dir(project)
    folder.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-P", "-m", "engram.hosts.detached", job.dumps()]
    with (folder / LOG).open("ab") as log:
        options: dict[str, Any] = (
            {"start_new_session": True}
            if os.name == "posix"
            else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
        )
        return subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            cwd=project,
            close_fds=True,
            **options,
        )


def log(message: str) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    print(f"{stamp} [{os.getpid()}] {message}", flush=True)


def run(job: HookJob) -> int:
    """Take the lock (or leave the marker and go), then capture until nobody asks for more."""
    from filelock import FileLock, Timeout  # here: the hook that only spawns us stays light

    folder = state_dir(job.project)
    lock = FileLock(folder / LOCK)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        (folder / AGAIN).touch()
        log(f"{job.event}: a capture is already running here; it will take this one's turns")
        return 0
    try:
        (folder / PID).write_text(str(os.getpid()), encoding="utf-8")
        for _ in range(ROUNDS):
            with contextlib.suppress(FileNotFoundError):
                (folder / AGAIN).unlink()
            started = time.monotonic()
            began_ns = time.time_ns()
            cap = job.capture_timeout
            result = run_worker(job.but(event="capture"), job.cwd, cap)
            took = f"{time.monotonic() - started:.1f} s"
            if result.get("ok"):
                for note in result.get("notes") or []:
                    log(f"warning: {note}")
                log(f"{job.event}: {result.get('summary', 'done')} ({took})")
                _mark_done(folder, began_ns)
            else:
                log(f"{job.event}: capture failed: {result.get('error')} ({took})")
            if not (folder / AGAIN).exists():
                break
    finally:
        with contextlib.suppress(FileNotFoundError):
            (folder / PID).unlink()
        lock.release()
    return 0


def _mark_done(folder: Path, began_ns: int) -> None:
    """Say a round finished, dated when it began: a transcript written later is news."""
    done = folder / DONE
    done.touch()
    os.utime(done, ns=(began_ns, began_ns))


def pending(project: Path, transcripts: Path | None, current: Path | None) -> bool:
    """Whether session start should wait for the catch-up capture: a capture is running, or
    asked to run again, or a transcript in the host's folder for this project (other than the
    session just starting) changed since the last good round began, or, before any round
    finished (a new project), exists at all. Stats only; True when it cannot tell (no
    transcript folder named, a folder or stamp it cannot read)."""
    folder = state_dir(project)
    if transcripts is None or (folder / PID).exists() or (folder / AGAIN).exists():
        return True
    try:
        done: int | None = (folder / DONE).stat().st_mtime_ns
    except FileNotFoundError:  # no round finished yet: every earlier transcript is work
        done = None
    except OSError:
        return True
    try:
        entries = list(os.scandir(transcripts))
    except FileNotFoundError:  # no transcript folder yet: nothing to catch up on
        return False
    except OSError:
        return True
    for entry in entries:
        if entry.name.endswith(".jsonl") and (current is None or entry.name != current.name):
            if done is None:
                return True
            with contextlib.suppress(OSError):
                if entry.stat().st_mtime_ns >= done:
                    return True
    return False


def main() -> int:
    if hasattr(os, "nice"):  # background work: the host's own hooks (recall) go first
        with contextlib.suppress(OSError):
            os.nice(10)
    try:
        return run(HookJob.loads(sys.argv[1]))
    except BaseException as exc:  # a detached process has nobody to tell but its log
        log(f"capture failed: {type(exc).__name__}: {exc}")
        return 0


if __name__ == "__main__":
    sys.exit(main())
