"""``engram hooks run``: do a hook's work for a host within a hard time cap, and never fail the
host's session. Recall runs in a child process (``engram.hosts.worker``) that is killed, with
everything it started, when the cap is reached; capture runs detached (``engram.hosts.detached``)
so a host that kills its hooks on exit cannot cut it. Any failure (bad config, broken store,
timeout, a crash) becomes exit 0, nothing on stdout and one line on stderr:
``engram: memory unavailable: <why>``. A folder that is no engram project is left alone."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from engram.hosts import detached, first_start, quiet
from engram.hosts.base import HookPayload, Host, generic_payload, plain_output
from engram.hosts.child import run_worker
from engram.hosts.job import HookJob
from engram.hosts.payload import PAYLOAD_LIMIT, PAYLOAD_WAIT, read_payload
from engram.locations import find_project_file

__all__ = ["PAYLOAD_LIMIT", "PAYLOAD_WAIT", "Outcome", "read_payload", "run_hook"]
from engram.hosts.registry import get as get_host
from engram.hosts.registry import hosts

CATCHUP_SHARE = 0.5  # share of session-start's budget it may wait for the catch-up capture


@dataclass
class Outcome:
    """What the hook prints: ``stdout`` for the host, ``stderr`` lines for people."""

    stdout: str = ""
    stderr: list[str] = field(default_factory=list)


def unavailable(why: str) -> Outcome:
    return Outcome(stderr=[f"engram: memory unavailable: {' '.join(why.split())}"])


def emit(outcome: Outcome) -> None:
    """Print the outcome: stdout for the host, stderr for people."""
    with contextlib.suppress(OSError):  # the host closed its end: nothing left to tell it
        if outcome.stdout:
            sys.stdout.write(outcome.stdout)
            sys.stdout.flush()
        for line in outcome.stderr:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()


def project_of(cwd: Path, config_file: Path | None) -> Path | None:
    """The engram project a hook run in ``cwd`` works on: the folder of the config file given
    or found upwards (``engram.toml``), else ``cwd`` when our hooks are installed for that
    very folder; None when it is no engram project (the hook then leaves it alone)."""
    if config_file is not None:
        return config_file.resolve().parent
    found = find_project_file(cwd)
    if found is not None:
        return found.parent
    return cwd if any(host.installed_in(cwd) for host in hosts()) else None


def run_hook(
    event: str,
    host_name: str | None,
    timeout: float,
    *,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    stdin: IO[Any] | None = None,
    capture_timeout: float = detached.CAPTURE_TIMEOUT,
) -> Outcome:
    """session-start: catch up on uncaptured sessions (detached; waited for, within a share of
    the budget, only when a stat says there is something to catch up), then the recall block
    (nothing, without a worker, when ``quiet`` says nothing it reads has changed since a recall
    found nothing, or ``first_start`` sees no memory file in the folders); session-end /
    pre-compact: start the detached capture and return at once."""
    deadline = time.monotonic() + timeout
    raw = read_payload(stdin, min(PAYLOAD_WAIT, timeout / 4))
    host = get_host(host_name) if host_name else None
    payload = host.parse_payload(raw) if host else generic_payload(raw)
    cwd = payload.cwd or Path.cwd()
    project = project_of(cwd, config_file)
    if project is None:
        return Outcome(stderr=[f"engram: {cwd} is no engram project (no engram.toml); skipped"])
    if event == "prompt":  # every prompt: files only, never a worker (engram.hosts.prompt)
        return _prompt(payload, cwd, project, config_file, overrides, host, deadline)
    root = host.transcript_root(payload) if host else None
    job = HookJob(
        event,
        cwd,
        project,
        config_file.resolve() if config_file else None,
        overrides or {},
        host_name,
        root,
        capture_timeout,
        payload.session_id,
    )
    # Asked before the spawn: the new capture's own pid file must not count as work pending.
    transcripts = payload.transcript.parent if payload.transcript else None
    current = payload.transcript
    # A host that sent nothing (no payload, garbage) names no transcript to catch up on: its
    # start is not held for a capture that may have nothing to do (it still runs, after).
    catch_up = (
        event == "session-start" and bool(raw) and detached.pending(project, transcripts, current)
    )
    if event != "session-start":
        detached.spawn(job, project)
        where = detached.state_dir(project) / detached.LOG
        return Outcome(stderr=[f"engram: capturing in the background (log: {where})"])
    if not catch_up:
        # Nothing to wait for: the capture starts once the recall is done, not beside it on the
        # same cores (its worker imports and opens everything the recall's does).
        try:
            return _recall(job, cwd, host, event, deadline, timeout)
        finally:
            detached.spawn(job, project)
    capture = detached.spawn(job, project)
    with contextlib.suppress(subprocess.TimeoutExpired):  # it goes on alone after the wait
        capture.wait(max(min(CATCHUP_SHARE * timeout, deadline - time.monotonic()), 0))
    return _recall(job, cwd, host, event, deadline, timeout)


def _prompt(
    payload: HookPayload,
    cwd: Path,
    project: Path,
    config_file: Path | None,
    overrides: dict[str, Any] | None,
    host: Host | None,
    deadline: float,
) -> Outcome:
    """The memories relevant to the new prompt, within the prompt's time budget."""
    from engram.hosts import prompt

    if not (payload.prompt or "").strip():
        return Outcome()
    resolved = config_file.resolve() if config_file else None
    job = HookJob("prompt", cwd, project, resolved, overrides or {})
    budget = max(min(prompt.TIME_BUDGET, deadline - time.monotonic()), 0.01)
    text = prompt.answer(job, payload.prompt or "", payload.session_id, budget)
    return Outcome(host.output("prompt", text) if host else plain_output("prompt", text))


def _recall(
    job: HookJob, cwd: Path, host: Host | None, event: str, deadline: float, timeout: float
) -> Outcome:
    """The recall block: the last one again when ``quiet`` says nothing it read has changed
    since; nothing when ``first_start`` finds no memory file to recall; else from a worker."""
    again = quiet.cached(job)
    if again is not None:
        if not again.text:
            return Outcome()
        from engram.hosts import prompt

        prompt.remember_seen(job.project, job.session_id, again.shown)
        quiet.note_recalled(job, again.recalled)  # counted by the next capture, off this clock
        return Outcome(host.output(event, again.text) if host else plain_output(event, again.text))
    if first_start.nothing_to_recall(job):
        return Outcome()
    result = run_worker(job, cwd, max(deadline - time.monotonic(), 0.01), timeout)
    if not result.get("ok"):
        return unavailable(str(result.get("error") or "the hook failed"))
    notes = [f"engram: warning: {note}" for note in result.get("notes") or []]
    text = str(result.get("text") or "")
    return Outcome(host.output(event, text) if host else plain_output(event, text), notes)
