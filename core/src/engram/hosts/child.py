"""The hook's work in a child process that can be abandoned: started in its own process group,
given its job as JSON on stdin, killed with everything it started when its time is up."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from engram.hosts import quiet
from engram.hosts.job import HookJob


def run_worker(
    job: HookJob, cwd: Path, remaining: float, cap: float | None = None
) -> dict[str, Any]:
    """Run ``job`` in ``engram.hosts.worker`` (own process group), killed after ``remaining``
    seconds; its result, or ``{"ok": False, "error": ...}``. Whether it worked is noted for the
    session-start shortcuts (``quiet.note_outcome``)."""
    result = _run(job, cwd, remaining, cap)
    quiet.note_outcome(job, bool(result.get("ok")))
    return result


def _run(job: HookJob, cwd: Path, remaining: float, cap: float | None) -> dict[str, Any]:
    argv = [sys.executable, "-P", "-m", "engram.hosts.worker"]
    group: dict[str, Any] = (
        {"start_new_session": True}
        if os.name == "posix"
        else {"creationflags": getattr(subprocess, "CREATE_NEW_PROCESS_GROUP", 0)}
    )
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=cwd,
        **group,
    )
    try:
        out, err = proc.communicate(job.dumps().encode(), timeout=remaining)
    except subprocess.TimeoutExpired:
        _kill(proc)
        cap = remaining if cap is None else cap
        return {"ok": False, "error": f"no answer within {cap:g} s (a hung store or embedder?)"}
    try:
        result = json.loads(out.decode("utf-8", "replace"))
    except ValueError:
        last = err.decode("utf-8", "replace").strip().splitlines()[-1:] or ["no output"]
        return {"ok": False, "error": f"the worker exited with code {proc.returncode}: {last[0]}"}
    return result if isinstance(result, dict) else {"ok": False, "error": "a malformed result"}


def _kill(proc: subprocess.Popen[bytes]) -> None:
    """Stop the worker and whatever it started (its process group), then reap it."""
    with contextlib.suppress(OSError):  # it may have ended on its own meanwhile
        if os.name == "posix":
            os.killpg(proc.pid, signal.SIGKILL)
        else:
            proc.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.communicate(timeout=2)
