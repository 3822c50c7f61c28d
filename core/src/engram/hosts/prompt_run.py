"""``engram hooks run prompt`` as a host runs it on every prompt: the host's JSON from stdin,
the project, the answer (``engram.hosts.prompt``) in the host's output form, and nothing else
imported on the way (no runner, no host modules, no subprocess) unless the folder has no
``engram.toml`` and the full check of installed hooks has to decide. Always exit 0; a failure
is one line on stderr."""

from __future__ import annotations

import contextlib
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts.base import plain_output
from engram.hosts.job import HookJob
from engram.hosts.payload import PAYLOAD_WAIT, read_payload
from engram.locations import find_project_file

if TYPE_CHECKING:
    from engram.hosts.events import RunArgs


def run(parsed: RunArgs) -> int:
    """Answer the prompt on stdout in the host's form; never fail the host."""
    try:
        out, err = _answer(parsed)
    except BaseException as exc:  # the host's prompt must never see a failure
        out, err = "", f"engram: memory unavailable: {type(exc).__name__}: {exc}"
    with contextlib.suppress(OSError):  # the host closed its end: nothing left to tell it
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
        if err:
            sys.stderr.write(" ".join(err.split()) + "\n")
            sys.stderr.flush()
    return 0


def _answer(parsed: RunArgs) -> tuple[str, str]:
    from engram.hosts import prompt

    deadline = time.monotonic() + parsed.timeout
    raw = read_payload(sys.stdin, min(PAYLOAD_WAIT, parsed.timeout / 4)) or {}
    text = raw.get("prompt")
    session_id = raw.get("session_id")
    cwd = _folder(raw.get("cwd")) or Path.cwd()
    project = _project(cwd, parsed.config_file)
    if project is None:
        return "", f"engram: {cwd} is no engram project (no engram.toml); skipped"
    if not isinstance(text, str) or not text.strip():
        return "", ""
    config_file = parsed.config_file.resolve() if parsed.config_file else None
    job = HookJob("prompt", cwd, project, config_file)
    budget = max(min(prompt.TIME_BUDGET, deadline - time.monotonic()), 0.01)
    found = prompt.answer(job, text, session_id if isinstance(session_id, str) else None, budget)
    return _output(parsed.host, found), ""


def _folder(value: Any) -> Path | None:
    """As ``engram.hosts.base.folder_of``: a payload path naming an existing folder."""
    if isinstance(value, str) and value and Path(value).is_dir():
        return Path(value).resolve()
    return None


def _project(cwd: Path, config_file: Path | None) -> Path | None:
    if config_file is not None:
        return config_file.resolve().parent
    found = find_project_file(cwd)
    if found is not None:
        return found.parent
    from engram.hosts.runner import project_of  # hooks installed for this very folder?

    return project_of(cwd, None)


def _output(host: str | None, text: str) -> str:
    """The block in the host's own form (only that host's light module is loaded), else as
    plain text ("" for nothing)."""
    if host is None:
        return plain_output("prompt", text)
    from engram.hosts.registry import get

    return get(host).output("prompt", text)
