"""What every transcript reader produces, whatever the agent's storage looks like."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, Protocol

from engram.errors import EngramError
from engram.filters import parse_iso
from engram.text.redact import strip_private

Role = Literal["user", "assistant"]
# Session ids become part of document ids and file lookups: nothing but safe characters.
SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")


class TranscriptError(EngramError):
    """A transcript cannot be read at all (missing, unreadable, not the expected format)."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One user or assistant message: its text only (tool calls and output left out)."""

    role: Role
    text: str
    timestamp: str | None = None
    message_id: str | None = None


@dataclass(slots=True)
class Transcript:
    """A session's turns in order, plus what is known about the session."""

    agent: str
    session_id: str
    turns: list[Turn] = field(default_factory=list)
    title: str | None = None
    project: str | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class SessionRef:
    """A session found in an agent's storage; ``fingerprint`` changes whenever it grows."""

    agent: str
    session_id: str
    path: Path
    fingerprint: str
    # The folder the session ran in, when discovery knows it (project scoping uses it).
    project: str | None = None

    @property
    def document_id(self) -> str:
        return document_id(self.agent, self.session_id)


class SessionSource(Protocol):
    """An agent's transcript storage: list sessions cheaply, read one fully."""

    agent: str
    root: Path

    def discover(self) -> tuple[list[SessionRef], list[str]]: ...
    def load(self, ref: SessionRef) -> Transcript: ...


class SessionHost(Protocol):
    """What indexing needs of a host (``engram.ingest.sessions.registry``): its transcripts."""

    @property
    def name(self) -> str: ...

    def sessions_dir(self) -> Path:
        """Where the host keeps transcripts when ``[sessions] dirs`` does not say."""
        ...

    def session_source(self, root: Path, project: Path | None) -> SessionSource:
        """The host's transcripts under ``root``; ``project`` keeps those run inside it."""
        ...


def in_project(directory: str | None, project: Path | None) -> bool:
    """Whether a session that ran in ``directory`` belongs to ``project`` (the folder itself or
    one inside it); every session does when no project is given."""
    if project is None:
        return True
    if not directory:
        return False
    try:
        folder = Path(directory).expanduser().resolve()
    except (OSError, ValueError):
        return False
    return folder == project or folder.is_relative_to(project)


def document_id(agent: str, session_id: str) -> str:
    return f"sessions/{agent}/{session_id}"


def fingerprint(entries: list[tuple[str, int, int]]) -> str:
    """Hash of (name, size, mtime_ns) of every file a session is made of."""
    digest = hashlib.sha256()
    for name, size, mtime in sorted(entries):
        digest.update(f"{name}\x00{size}\x00{mtime}\n".encode("utf-8", "surrogatepass"))
    return digest.hexdigest()


def clean_text(text: str) -> str:
    """Message text as stored: private spans removed, surrounding blank space trimmed."""
    return strip_private(text).strip()


def iso_from_millis(value: object) -> str | None:
    """OpenCode's epoch milliseconds as an ISO UTC timestamp (None if not a number)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value / 1000, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def iso_from_text(value: object) -> str | None:
    """An ISO timestamp string normalised to UTC (None if it is not one)."""
    if not isinstance(value, str):
        return None
    parsed = parse_iso(value.replace("Z", "+00:00"))
    return parsed.isoformat() if parsed else None
