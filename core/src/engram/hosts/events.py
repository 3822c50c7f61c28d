"""The names every hook command line uses, and the parsed line, in a module that imports
nothing of engram: ``engram hooks run`` parses its arguments with these before it knows which
(heavier) modules the event needs, and the per-prompt hook, which runs on every prompt, imports
no more than it must."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

# Our events: recall at the start, capture at the end and before the host compacts, and the
# few memories relevant to each new prompt.
EVENTS = ("session-start", "session-end", "pre-compact", "prompt")
CAPTURE_TIMEOUT = 600.0  # seconds one round of indexing and capture may take, at most


@dataclass(frozen=True)
class RunArgs:
    """One ``engram hooks run`` command line, parsed (``engram.hosts.entry.parse``)."""

    event: str
    host: str | None = None
    timeout: float = 60.0
    capture_timeout: float = CAPTURE_TIMEOUT
    config_file: Path | None = None
