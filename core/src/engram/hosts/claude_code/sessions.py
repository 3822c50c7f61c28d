"""Claude Code's transcripts: one JSON Lines file per session, ``~/.claude/projects/<project>/
<session id>.jsonl``. Each line is an event::

    {"type": "user", "message": {"role": "user", "content": "..."}, "timestamp": "...", ...}
    {"type": "assistant", "message": {"id": "msg_1", "role": "assistant",
     "content": [{"type": "text", "text": "..."}, {"type": "tool_use", ...}]}, ...}
    {"type": "summary", "summary": "..."}

Only text blocks of user and assistant messages are kept: tool use, tool results, thinking,
images, meta messages, slash-command echoes and side chains (sub-agents) are left out. Lines
streamed for one assistant message (same ``message.id``) become one turn. A line that is not
valid JSON (a partial last line while Claude Code is writing) is skipped with a warning.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engram.ingest.sessions.base import (
    SAFE_ID,
    Role,
    SessionRef,
    Transcript,
    TranscriptError,
    Turn,
    clean_text,
    fingerprint,
    in_project,
    iso_from_text,
)

AGENT = "claude-code"
_COMMAND_NOISE = ("<command-", "<local-command-")


_NOT_ALNUM = re.compile(r"[^A-Za-z0-9]")
HEAD_BYTES = 64 * 1024  # how much of a transcript is read to find the folder it ran in


def config_dir() -> Path:
    """Claude Code's own folder: ``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    explicit = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(explicit).expanduser() if explicit else Path.home() / ".claude"


def default_root() -> Path:
    return config_dir() / "projects"


def project_folder_name(project: Path) -> str:
    """The name Claude Code gives a project's transcript folder: its path, every character
    that is not a letter or digit turned into ``-`` (``/home/me/shop`` → ``-home-me-shop``)."""
    return _NOT_ALNUM.sub("-", str(project))


class ClaudeCodeSource:
    """Sessions of one Claude Code projects folder (``project``: only sessions run inside it:
    its own transcript folder, and those of folders inside it whose transcripts say so)."""

    agent = AGENT

    def __init__(self, root: Path, project: Path | None = None) -> None:
        self.root = root.expanduser()
        self.project = project

    def _transcripts(self) -> list[Path]:
        if self.project is None:
            return sorted(self.root.glob("*/*.jsonl"))
        name = project_folder_name(self.project)
        found = sorted((self.root / name).glob("*.jsonl")) if (self.root / name).is_dir() else []
        for folder in sorted(self.root.glob(f"{name}-*")):  # name: letters, digits and -
            found += [p for p in sorted(folder.glob("*.jsonl")) if self._ran_inside(p)]
        return found

    def _ran_inside(self, path: Path) -> bool:
        """Whether the transcript's ``cwd`` (in its first lines) is inside the project."""
        try:
            with path.open("rb") as handle:
                head = handle.read(HEAD_BYTES)
        except OSError:
            return False
        for _, event in _events(head):
            if event is not None and isinstance(event.get("cwd"), str):
                return in_project(event["cwd"], self.project)
        return False

    def discover(self) -> tuple[list[SessionRef], list[str]]:
        warnings: list[str] = []
        refs: dict[str, SessionRef] = {}
        for path in self._transcripts():
            session_id = path.stem
            if not SAFE_ID.match(session_id):
                warnings.append(f"claude-code: {path.name[:40]!r} is not a usable session id")
                continue
            if session_id in refs:
                warnings.append(
                    f"claude-code: session {session_id} appears in two projects; "
                    f"{path.parent.name} skipped"
                )
                continue
            try:
                st = path.stat()
            except OSError:
                continue
            refs[session_id] = SessionRef(
                AGENT, session_id, path, fingerprint([(path.name, st.st_size, st.st_mtime_ns)])
            )
        return list(refs.values()), warnings

    def load(self, ref: SessionRef) -> Transcript:
        try:
            raw = ref.path.read_bytes()
        except OSError as exc:
            raise TranscriptError(
                f"cannot read {ref.path.name}: {exc.strerror or exc}; check its permissions"
            ) from None
        return parse_transcript(raw, ref.path.name, ref.session_id)


def parse_transcript(raw: bytes, name: str, session_id: str) -> Transcript:
    """The turns of a Claude Code transcript's text (JSON Lines); ``name`` is what warnings
    call it. Text, not a file, so a transcript handed over on stdin is read as it is."""
    transcript = Transcript(agent=AGENT, session_id=session_id)
    last_key: tuple[Role, str] | None = None
    bad = 0
    for number, event in _events(raw):
        if event is None:
            bad += 1
            if bad <= 3:
                transcript.warnings.append(
                    f"claude-code: {name} line {number} is not valid JSON (partial write?); skipped"
                )
        elif event.get("type") == "summary" and isinstance(event.get("summary"), str):
            transcript.title = clean_text(event["summary"]) or transcript.title
        else:
            last_key = _add_turn(transcript, event, last_key)
    if bad > 3:
        transcript.warnings.append(f"claude-code: {name}: {bad} bad lines in all")
    if transcript.title is None:
        transcript.title = _first_user_line(transcript)
    return transcript


def _events(raw: bytes) -> Iterator[tuple[int, dict[str, Any] | None]]:
    """(line number, event) of every JSON object line; None for a line that is not JSON."""
    for number, raw_line in enumerate(raw.splitlines(), 1):
        if not raw_line.strip():
            continue
        try:
            event = json.loads(raw_line)
        except ValueError:
            yield number, None
            continue
        if isinstance(event, dict):
            yield number, event


def _add_turn(
    transcript: Transcript, event: dict[str, Any], last_key: tuple[Role, str] | None
) -> tuple[Role, str] | None:
    """Append the event's turn; parts of one assistant message (same id) join one turn.
    Returns the key the next event is compared with."""
    turn = _turn(event)
    if turn is None:
        return last_key
    if transcript.project is None and isinstance(event.get("cwd"), str):
        transcript.project = event["cwd"]
    key = (turn.role, turn.message_id) if turn.message_id else None
    if key is not None and key == last_key and transcript.turns:
        previous = transcript.turns[-1]
        transcript.turns[-1] = Turn(
            previous.role,
            f"{previous.text}\n\n{turn.text}",
            previous.timestamp,
            previous.message_id,
        )
    else:
        transcript.turns.append(turn)
    return key


def _first_user_line(transcript: Transcript) -> str | None:
    """A title for a session that has no summary: its first user line, shortened."""
    first_user = next((t.text for t in transcript.turns if t.role == "user"), None)
    if not first_user:
        return None
    first = first_user.splitlines()[0]
    return first if len(first) <= 80 else first[:79] + "…"


def _turn(event: dict[str, Any]) -> Turn | None:
    """The user or assistant text of one event, or None when it carries none."""
    kind = event.get("type")
    if kind not in ("user", "assistant") or event.get("isMeta") or event.get("isSidechain"):
        return None
    message = event.get("message")
    if not isinstance(message, dict):
        return None
    role: Role = "user" if kind == "user" else "assistant"
    text = clean_text(_content_text(message.get("content")))
    if not text or text.startswith(_COMMAND_NOISE):
        return None
    message_id = message.get("id") if role == "assistant" else event.get("uuid")
    return Turn(
        role=role,
        text=text,
        timestamp=iso_from_text(event.get("timestamp")),
        message_id=message_id if isinstance(message_id, str) else None,
    )


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    texts = [
        block["text"]
        for block in content
        if isinstance(block, dict)
        and block.get("type") == "text"
        and isinstance(block.get("text"), str)
    ]
    return "\n\n".join(texts)
