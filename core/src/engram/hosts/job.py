"""A hook's job: what ``engram hooks run`` hands the worker, the detached capture and the
per-prompt refresh, typed and frozen, and turned to JSON and back here alone. Every process
boundary the job crosses (a child's stdin, a detached process's argument) uses ``dumps`` and
``loads``, so a field is added, renamed or read in one place, never by a string key.

Light on purpose (the standard library only): the per-prompt hook builds one on every prompt."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from engram.hosts.events import CAPTURE_TIMEOUT


@dataclass(frozen=True)
class HookJob:
    """One hook's work. ``event``: our event (or ``capture``, the detached round's);
    ``cwd``: where the host ran the hook; ``project``: the engram project it works on;
    ``config_file``: an explicit ``--config``; ``host``: the host's registry name;
    ``transcript_root``: where the host said its transcripts are (its own payload)."""

    event: str
    cwd: Path
    project: Path
    config_file: Path | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    host: str | None = None
    transcript_root: Path | None = None
    capture_timeout: float = CAPTURE_TIMEOUT
    session_id: str | None = None

    def but(self, **changes: Any) -> HookJob:
        """This job with some fields changed (the capture round of a session-end job)."""
        return replace(self, **changes)

    def dumps(self) -> str:
        """The job as JSON: paths as strings, everything else as it is."""
        body = asdict(self)
        for name in _PATHS:
            if body[name] is not None:
                body[name] = str(body[name])
        return json.dumps(body)

    @classmethod
    def loads(cls, text: str | bytes) -> HookJob:
        """The job ``dumps`` wrote; a missing or malformed field is a ``ValueError``."""
        body = json.loads(text)
        if not isinstance(body, dict) or not isinstance(body.get("event"), str):
            raise ValueError("a hook job must be a JSON object with an event")
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in body.items() if k in known}
        for name in _PATHS:
            if values.get(name) is not None:
                values[name] = Path(values[name])
        if not isinstance(values.get("overrides") or {}, dict):
            raise ValueError("a hook job's overrides must be an object")
        values["overrides"] = values.get("overrides") or {}
        values["capture_timeout"] = float(values.get("capture_timeout") or CAPTURE_TIMEOUT)
        try:
            return cls(**values)
        except TypeError as exc:  # a required field missing
            raise ValueError(f"a malformed hook job: {exc}") from None


_PATHS = ("cwd", "project", "config_file", "transcript_root")
