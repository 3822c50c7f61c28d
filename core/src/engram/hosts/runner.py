"""``engram hooks run``: do a hook's work for a host within a hard time cap, and never fail the
host's session. The work runs in a child process (``engram.hosts.worker``) that is killed, with
everything it started, when the cap is reached; any failure (bad config, broken store, timeout,
a crash) becomes exit 0, nothing on stdout and one line on stderr:
``engram: memory unavailable: <why>``."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

PAYLOAD_LIMIT = 1 << 20  # bytes of host JSON read from stdin, at most
PAYLOAD_WAIT = 2.0  # seconds to wait for the host to send its JSON and close stdin


@dataclass
class Outcome:
    """What the hook prints: ``stdout`` for the host, ``stderr`` lines for people."""

    stdout: str = ""
    stderr: list[str] = field(default_factory=list)


def unavailable(why: str) -> Outcome:
    return Outcome(stderr=[f"engram: memory unavailable: {' '.join(why.split())}"])


def read_payload(stream: IO[Any] | None, wait: float) -> dict[str, Any] | None:
    """The host's JSON object on stdin, or None: no stdin, a terminal, garbage, or nothing
    within ``wait`` seconds (the read goes on in a thread nobody waits for)."""
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
    except (OSError, ValueError):  # a closed stdin
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # an in-memory stream: it cannot block
        data = stream.read(PAYLOAD_LIMIT)
        return _parse(data.encode() if isinstance(data, str) else data)
    box: list[bytes] = []
    reader = threading.Thread(target=lambda: box.append(_read_fd(fd)), daemon=True)
    reader.start()
    reader.join(wait)
    return _parse(box[0]) if box else None


def _read_fd(fd: int) -> bytes:
    """Read to end of file on a raw descriptor (no buffer lock a daemon thread could hold)."""
    chunks: list[bytes] = []
    size = 0
    with contextlib.suppress(OSError):
        while size < PAYLOAD_LIMIT and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _parse(data: bytes | None) -> dict[str, Any] | None:
    try:
        value = json.loads((data or b"").decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def project_folder(payload: dict[str, Any] | None) -> Path:
    """The session's folder: the host's ``cwd`` when it names a folder, else ours."""
    cwd = (payload or {}).get("cwd")
    if isinstance(cwd, str) and cwd and Path(cwd).is_dir():
        return Path(cwd).resolve()
    return Path.cwd()


def host_output(event: str, host: str | None, text: str) -> str:
    """The recall block as the host wants it: Claude Code's SessionStart JSON
    (``hookSpecificOutput.additionalContext``), plain text otherwise, nothing when empty."""
    if event != "session-start" or not text.strip():
        return ""
    if host == "claude-code":
        output = {"hookEventName": "SessionStart", "additionalContext": text}
        return json.dumps({"hookSpecificOutput": output}) + "\n"
    return text if text.endswith("\n") else text + "\n"


def run_hook(
    event: str,
    host: str | None,
    timeout: float,
    *,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    stdin: IO[Any] | None = None,
) -> Outcome:
    """Run ``event``'s work in a child process for at most ``timeout`` seconds in all."""
    deadline = time.monotonic() + timeout
    payload = read_payload(stdin, min(PAYLOAD_WAIT, timeout / 4))
    cwd = project_folder(payload)
    job = {
        "event": event,
        "cwd": str(cwd),
        "config_file": str(config_file.resolve()) if config_file else None,
        "overrides": overrides or {},
        "payload": payload,
    }
    result = _run_worker(job, cwd, max(deadline - time.monotonic(), 0.01), timeout)
    if not result.get("ok"):
        return unavailable(str(result.get("error") or "the hook failed"))
    notes = [f"engram: warning: {note}" for note in result.get("notes") or []]
    if result.get("summary"):
        notes.append(f"engram: {result['summary']}")
    return Outcome(host_output(event, host, str(result.get("text") or "")), notes)


def _run_worker(job: dict[str, Any], cwd: Path, remaining: float, cap: float) -> dict[str, Any]:
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
        out, err = proc.communicate(json.dumps(job).encode(), timeout=remaining)
    except subprocess.TimeoutExpired:
        _kill(proc)
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
