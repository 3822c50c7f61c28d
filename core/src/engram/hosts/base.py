"""What every agent host is to engram: the files ``engram hooks install`` writes (and
``uninstall`` removes), what the host sends a hook on stdin, how the recall block goes back to
it, where its transcripts are and how they are read. A new host (Cursor, Codex CLI, Gemini
CLI…) is one folder, ``engram/hosts/<name>/``, whose package holds a class that implements
``Host``, plus one ``register`` line in ``engram.ingest.sessions.registry``; the conformance
suite ``engram.testing.host_suite`` says what each method must do."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from engram.hosts.events import EVENTS

if TYPE_CHECKING:
    from engram.hosts.files import Change
    from engram.ingest.sessions.base import SessionSource

__all__ = ["EVENTS", "HookPayload", "Host", "folder_of", "generic_payload", "plain_output"]


@dataclass(frozen=True)
class HookPayload:
    """What a host told a hook about its session (every field may be missing)."""

    cwd: Path | None = None
    session_id: str | None = None
    transcript: Path | None = None
    event: str | None = None
    prompt: str | None = None  # the user's new prompt (the per-prompt hook)


class Host(Protocol):
    """One agent host."""

    @property
    def name(self) -> str: ...

    @property
    def scopes(self) -> tuple[str, ...]:
        """Where it can be installed: user, project (and local, for some)."""
        ...

    def plan_install(
        self, scope: str, project_dir: Path, base: list[str], config: Path | None
    ) -> Change:
        """The change that installs our hooks."""
        ...

    def plan_uninstall(self, scope: str, project_dir: Path) -> Change:
        """The change that removes our hooks and nothing else."""
        ...

    def installed_in(self, folder: Path) -> bool:
        """Whether our hooks are installed for this very project folder."""
        ...

    def parse_payload(self, raw: dict[str, Any] | None) -> HookPayload:
        """The host's stdin JSON, read leniently (garbage gives an empty payload)."""
        ...

    def output(self, event: str, text: str) -> str:
        """The recall block in the form the host reads from stdout ("" for nothing)."""
        ...

    def transcript_root(self, payload: HookPayload) -> Path | None:
        """Where this host keeps transcripts, when the payload or environment says."""
        ...

    def sessions_dir(self) -> Path:
        """Where the host keeps transcripts when ``[sessions] dirs`` does not say."""
        ...

    def session_source(self, root: Path, project: Path | None) -> SessionSource:
        """The host's transcripts under ``root``; ``project`` keeps those run inside it."""
        ...


def folder_of(value: object) -> Path | None:
    """A payload path that names an existing folder, resolved; else None."""
    if isinstance(value, str) and value and Path(value).is_dir():
        return Path(value).resolve()
    return None


def generic_payload(raw: dict[str, Any] | None) -> HookPayload:
    """The fields every host we know sends the same way (``cwd``, ``session_id``)."""
    raw = raw or {}
    session_id = raw.get("session_id")
    prompt = raw.get("prompt")
    return HookPayload(
        cwd=folder_of(raw.get("cwd")),
        session_id=session_id if isinstance(session_id, str) else None,
        prompt=prompt if isinstance(prompt, str) else None,
    )


def plain_output(event: str, text: str) -> str:
    """The block as plain text on stdout (hosts that read the output as context)."""
    if event not in ("session-start", "prompt") or not text.strip():
        return ""
    return text if text.endswith("\n") else text + "\n"
