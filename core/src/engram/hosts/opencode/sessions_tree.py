"""OpenCode's file storage before 1.2 (``~/.local/share/opencode/storage``)::

    session/<project id>/<session id>.json   {id, title, directory, time: {created, updated}}
    message/<session id>/<message id>.json   {id, sessionID, role, time: {created, completed}}
    part/<message id>/<part id>.json         {id, messageID, type, text, synthetic, time}

A message's words are its ``text`` parts; tool calls, tool output, reasoning, step markers,
files and synthetic (injected) text are left out. A file that is not valid JSON is skipped with a
warning; the rest of the session is still read. OpenCode 1.2+ keeps sessions in ``opencode.db``
(``opencode_db``); this tree is the fallback for older installs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from engram.ingest.sessions.base import (
    SAFE_ID,
    SessionRef,
    Transcript,
    TranscriptError,
    Turn,
    clean_text,
    fingerprint,
    in_project,
    iso_from_millis,
)

AGENT = "opencode"


class OpenCodeTree:
    """Sessions of one OpenCode storage folder (``project``: only sessions run inside it)."""

    agent = AGENT

    def __init__(self, root: Path, project: Path | None = None) -> None:
        self.root = root
        self.project = project
        self._session_index: dict[str, Path] | None = None

    def _sessions(self) -> dict[str, Path]:
        """Session id → its ``session/<project>/<id>.json`` file, read once per source."""
        if self._session_index is None:
            self._session_index = {p.stem: p for p in _json_files(self.root / "session", depth=2)}
        return self._session_index

    def discover(self) -> tuple[list[SessionRef], list[str]]:
        warnings: list[str] = []
        self._session_index = None  # storage may have changed since the last look
        session_files = self._sessions()
        message_root = self.root / "message"
        ids = set(session_files)
        if message_root.is_dir():
            ids |= {d.name for d in message_root.iterdir() if d.is_dir()}
        refs = []
        for session_id in sorted(ids):
            if not SAFE_ID.match(session_id):
                warnings.append(f"opencode: session id {session_id[:40]!r} is not usable; skipped")
                continue
            directory = self._directory(session_files.get(session_id))
            if not in_project(directory, self.project):
                continue
            files = self._session_files(session_id, session_files.get(session_id))
            entries = []
            for path in files:
                try:
                    st = path.stat()
                except OSError:
                    continue  # removed while we looked: the next run sees the new state
                entries.append((path.relative_to(self.root).as_posix(), st.st_size, st.st_mtime_ns))
            refs.append(
                SessionRef(
                    AGENT, session_id, message_root / session_id, fingerprint(entries), directory
                )
            )
        return refs, warnings

    def _directory(self, session_file: Path | None) -> str | None:
        """The folder a session ran in, from its session file (read only when scoping)."""
        if session_file is None or self.project is None:
            return None
        info = _read_json(session_file, [], self.root)
        directory = info.get("directory") if isinstance(info, dict) else None
        return directory if isinstance(directory, str) else None

    def _session_files(self, session_id: str, session_file: Path | None) -> list[Path]:
        files = [session_file] if session_file else []
        messages = _json_files(self.root / "message" / session_id, depth=1)
        files += messages
        for message in messages:
            files += _json_files(self.root / "part" / message.stem, depth=1)
        return files

    def load(self, ref: SessionRef) -> Transcript:
        transcript = Transcript(agent=AGENT, session_id=ref.session_id)
        session_file = self._sessions().get(ref.session_id)
        if session_file is not None:
            info = _read_json(session_file, transcript.warnings, self.root)
            if isinstance(info, dict):
                title = info.get("title")
                if isinstance(title, str):
                    transcript.title = clean_text(title) or None
                directory = info.get("directory")
                transcript.project = directory if isinstance(directory, str) else None
        message_dir = self.root / "message" / ref.session_id
        if session_file is None and not message_dir.is_dir():
            raise TranscriptError(f"opencode session {ref.session_id} no longer exists")
        messages = []
        for path in _json_files(message_dir, depth=1):
            data = _read_json(path, transcript.warnings, self.root)
            if isinstance(data, dict):
                messages.append((path, data))
        messages.sort(key=lambda pair: (_created(pair[1]), pair[0].stem))
        for path, message in messages:
            role = message.get("role")
            if role not in ("user", "assistant"):
                continue
            text = self._message_text(path.stem, message, transcript.warnings)
            if text:
                transcript.turns.append(
                    Turn(
                        role=role,
                        text=text,
                        timestamp=iso_from_millis(_created(message)),
                        message_id=path.stem,
                    )
                )
        return transcript

    def _message_text(self, message_id: str, message: dict[str, Any], warnings: list[str]) -> str:
        parts: list[dict[str, Any]] = []
        inline = message.get("parts")  # older versions kept the parts inside the message
        if isinstance(inline, list):
            parts += [p for p in inline if isinstance(p, dict)]
        # Part ids grow with time, so file name order is the order they were written in.
        for path in _json_files(self.root / "part" / message_id, depth=1):
            data = _read_json(path, warnings, self.root)
            if isinstance(data, dict):
                parts.append(data)
        return parts_text(parts)


def parts_text(parts: list[dict[str, Any]]) -> str:
    """A message's words: its ``text`` parts, neither synthetic (injected) nor ignored."""
    texts = [
        clean_text(p["text"])
        for p in parts
        if p.get("type") == "text"
        and isinstance(p.get("text"), str)
        and not p.get("synthetic")
        and not p.get("ignored")
    ]
    return "\n\n".join(t for t in texts if t)


def _json_files(folder: Path, *, depth: int) -> list[Path]:
    if not folder.is_dir():
        return []
    pattern = "*.json" if depth == 1 else "*/*.json"
    return sorted(p for p in folder.glob(pattern) if p.is_file())


def _read_json(path: Path, warnings: list[str], root: Path) -> Any:
    try:
        return json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        reason = "unreadable" if isinstance(exc, OSError) else "not valid JSON (partial write?)"
        warnings.append(f"opencode: {path.relative_to(root).as_posix()} is {reason}; skipped")
        return None


def _created(message: dict[str, Any]) -> float:
    time = message.get("time")
    value = time.get("created") if isinstance(time, dict) else None
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0.0
