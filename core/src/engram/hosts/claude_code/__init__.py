"""Claude Code as a host, all of it in this folder: what its hooks send (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` on stdin) and how the recall block goes back
(``hookSpecificOutput.additionalContext``), here; its settings file, in ``install``; its
transcripts, in ``sessions``. Those two load when asked: the per-prompt hook imports this
module on every prompt and needs only ``output``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts.base import HookPayload, folder_of, generic_payload

if TYPE_CHECKING:
    from engram.hosts.files import Change
    from engram.ingest.sessions.base import SessionSource, Transcript

HOST = "claude-code"
# Claude Code's name for the event whose output we answer with additional context.
CONTEXT_EVENTS = {"session-start": "SessionStart", "prompt": "UserPromptSubmit"}


class ClaudeCode:
    """Claude Code as a ``Host``."""

    name = HOST
    scopes = ("user", "project", "local")

    def plan_install(
        self, scope: str, project_dir: Path, base: list[str], config: Path | None
    ) -> Change:
        from engram.hosts.claude_code import install

        return install.plan_install(install.settings_path(scope, project_dir), base, config)

    def plan_uninstall(self, scope: str, project_dir: Path) -> Change:
        from engram.hosts.claude_code import install

        return install.plan_uninstall(install.settings_path(scope, project_dir))

    def installed_in(self, folder: Path) -> bool:
        from engram.hosts.claude_code import install

        return install.installed_in(folder)

    def parse_payload(self, raw: dict[str, Any] | None) -> HookPayload:
        base = generic_payload(raw)
        transcript = (raw or {}).get("transcript_path")
        event = (raw or {}).get("hook_event_name")
        path = Path(transcript) if isinstance(transcript, str) and transcript else None
        return HookPayload(
            base.cwd,
            base.session_id,
            path if path is not None and path.suffix == ".jsonl" else None,
            event if isinstance(event, str) else None,
            base.prompt,
        )

    def output(self, event: str, text: str) -> str:
        """SessionStart's and UserPromptSubmit's JSON (``hookSpecificOutput.
        additionalContext``); else nothing."""
        name = CONTEXT_EVENTS.get(event)
        if name is None or not text.strip():
            return ""
        output = {"hookEventName": name, "additionalContext": text}
        return json.dumps({"hookSpecificOutput": output}) + "\n"

    def transcript_root(self, payload: HookPayload) -> Path | None:
        """The projects folder the host's own transcript lives in (``<root>/<project>/<id>
        .jsonl``): it follows ``CLAUDE_CONFIG_DIR`` without our having to."""
        if payload.transcript is not None:
            return folder_of(str(payload.transcript.parent.parent))
        return None

    def sessions_dir(self) -> Path:
        from engram.hosts.claude_code.sessions import default_root

        return default_root()

    def session_source(self, root: Path, project: Path | None) -> SessionSource:
        from engram.hosts.claude_code.sessions import ClaudeCodeSource

        return ClaudeCodeSource(root, project)

    def read_transcript(self, raw: bytes, name: str, session_id: str) -> Transcript:
        """One transcript handed over as text (``engram capture FILE.jsonl``)."""
        from engram.hosts.claude_code.sessions import parse_transcript

        return parse_transcript(raw, name, session_id)
