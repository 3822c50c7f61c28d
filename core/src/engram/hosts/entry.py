"""``engram hooks run`` as a host runs it, without typer: every session start pays the CLI's
start-up, so the exact command lines ``engram hooks install`` writes are parsed here by hand,
and anything else (``--help``, another global option, a bad value) goes to the typer app,
which gives the usual usage messages."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from engram.hosts.events import CAPTURE_TIMEOUT, EVENTS, RunArgs
from engram.ingest.sessions.registry import names as host_names

MIN_SECONDS = 0.01  # what the typer options accept, at least


def parse(args: Sequence[str]) -> RunArgs | None:
    """``[--config FILE] hooks run EVENT [--host H] [--timeout S] [--capture-timeout S]``, or
    None for anything else (typer then parses it, and explains what is wrong)."""
    words = _split(args)
    values: dict[str, str] = {}
    while words and words[0] in ("--config", "-c") and len(words) > 1:
        values["config"] = words[1]
        words = words[2:]
    if words[:2] != ["hooks", "run"]:
        return None
    words = words[2:]
    event = None
    while words:
        word = words.pop(0)
        if word in ("--host", "--timeout", "--capture-timeout") and words:
            values[word] = words.pop(0)
        elif word in EVENTS and event is None:
            event = word
        else:
            return None
    host = values.get("--host")
    timeout = _seconds(values.get("--timeout", "60"))
    capture = _seconds(values.get("--capture-timeout", str(CAPTURE_TIMEOUT)))
    unknown_host = host is not None and host not in host_names()
    if event is None or unknown_host or None in (timeout, capture):
        return None
    config = values.get("config")
    return RunArgs(event, host, timeout or 60.0, capture or CAPTURE_TIMEOUT, _path(config))


def _split(args: Sequence[str]) -> list[str]:
    """``--name=value`` as two words, as click reads it."""
    words: list[str] = []
    for word in args:
        name, eq, value = word.partition("=")
        words += [name, value] if eq and name.startswith("--") else [word]
    return words


def _seconds(raw: str) -> float | None:
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if value >= MIN_SECONDS else None


def _path(raw: str | None) -> Path | None:
    return Path(raw) if raw else None


def main(parsed: RunArgs) -> int:
    """Run the hook; always exit 0, a failure is one line on stderr. The per-prompt hook takes
    its own light path (``engram.hosts.prompt_run``); the others import the runner."""
    if parsed.event == "prompt":
        from engram.hosts.prompt_run import run

        return run(parsed)
    from engram.hosts.runner import emit, run_hook, unavailable
    from engram.hosts.worker import describe

    try:
        outcome = run_hook(
            parsed.event,
            parsed.host,
            parsed.timeout,
            config_file=parsed.config_file,
            stdin=sys.stdin,
            capture_timeout=parsed.capture_timeout,
        )
    except BaseException as exc:  # the host's session must never see a failure
        outcome = unavailable(describe(exc))
    emit(outcome)
    return 0
