"""Capture: conversations become memories through the configured extractor.

``Memory.capture(messages, mode)`` strips private spans, asks the extractor, keeps the
configured types and writes each memory through the same path as ``remember`` (dedup,
contradiction, aging). ``normal`` mode reads the WHOLE conversation in windows of
``[capture] normal_messages`` messages that overlap by ``extraction.OVERLAP`` (so an error and
its fix in adjacent windows still pair); the report lists each window, and warns when a message
was too long to be read whole. ``summary`` and ``init`` read their one window. It never raises
for the extractor's failures: they come back as warnings with ``failed`` set, and nothing
stored is touched.

``capture_sessions`` does it for indexed agent sessions, incrementally: a session is captured
once per growth (every turn added since its last capture, in windows of ``normal_messages``,
in ``normal`` mode, plus a fresh ``summary`` of the whole session), no sooner than
``[capture] cooldown_seconds`` after the last time. The capture log is written only after a
capture that worked, so a failed one is retried.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from engram.config import CaptureConfig
from engram.errors import EngramError
from engram.extraction import (
    Window,
    check_mode,
    cleaned,
    keep_types,
    prepare,
    split_windows,
    unique_memories,
)
from engram.ingest.report import Progress
from engram.ingest.sessions.base import SessionRef, TranscriptError
from engram.ingest.sessions.sync import SOURCE, session_sources
from engram.memories.agent import list_memories, remember, supersede
from engram.memories.lifecycle.captures import CaptureLog
from engram.memories.scopes import Scope
from engram.memories.writer import Writer
from engram.models import ExtractedMemory, ExtractionMode, Message, StoredMemory
from engram.protocols import Extractor, ReportsFailures

SESSION_TAG = "session:"


class CaptureReport(BaseModel):
    """What one capture did. ``windows``: the ``[start, end)`` message indexes each call to the
    extractor saw; ``used``: how many messages were read (all in ``normal`` mode);
    ``unseen``: messages no window read (always 0 in ``normal`` mode)."""

    mode: str
    messages: int = 0
    used: int = 0
    unseen: int = 0
    windows: list[list[int]] = Field(default_factory=list)
    extracted: int = 0
    stored: list[StoredMemory] = Field(default_factory=list)
    skipped: str | None = None
    failed: bool = False
    warnings: list[str] = Field(default_factory=list)

    @property
    def created(self) -> int:
        return sum(1 for s in self.stored if s.action == "created")

    @property
    def updated(self) -> int:
        return sum(1 for s in self.stored if s.action == "updated")

    @property
    def superseded(self) -> int:
        return sum(len(s.superseded) for s in self.stored)

    def summary(self) -> str:
        if self.skipped:
            return f"nothing captured ({self.mode}): {self.skipped}"
        return (
            f"captured {len(self.stored)} memories ({self.created} new, {self.updated} updated, "
            f"{self.superseded} superseded) from {self.used} of {self.messages} messages in "
            f"{len(self.windows)} window{'s' if len(self.windows) != 1 else ''} [{self.mode}]"
        )


def windows(config: CaptureConfig) -> dict[ExtractionMode, Window]:
    return {
        "normal": Window(config.normal_messages, config.normal_chars),
        "summary": Window(config.summary_messages, config.summary_chars),
        "init": Window(None, config.init_chars),
    }


def capture(
    writer: Writer,
    messages: Sequence[Message],
    mode: str = "normal",
    *,
    scope: Scope = "project",
    source: str = "capture",
    tags: Sequence[str] = (),
) -> CaptureReport:
    """Extract memories from ``messages`` and write them (see the module docstring)."""
    cfg = writer.config.capture
    found, report = extract_windows(writer.require_extractor, messages, mode, cfg, skip_short=True)
    if report.skipped or report.failed:
        return report
    for item in found:
        report.stored.append(_store(writer, item, scope, source, tags))
    for stored in report.stored:
        report.warnings.extend(stored.warnings)
    return report


def extract_windows(
    get_extractor: Callable[[], Extractor],
    messages: Sequence[Message],
    mode: str,
    cfg: CaptureConfig,
    *,
    skip_short: bool = False,
) -> tuple[list[ExtractedMemory], CaptureReport]:
    """What capture would store, before the write path: the extractor's memories from every
    window (of the configured types, each once) and the report of what was read. The bench
    measures extraction through this same function."""
    checked = check_mode(mode)
    report = CaptureReport(mode=checked, messages=len(messages))
    pieces = _pieces(messages, checked, windows(cfg)[checked], report)
    if skip_short:
        shown = (
            [m for _, m in cleaned(messages)]
            if checked == "normal"
            else [m for piece in pieces for m in piece]
        )
        too_short = _too_short(shown, checked, cfg)
        if too_short:
            report.skipped = too_short
            return [], report
    if not pieces:
        return [], report
    extractor = get_extractor()
    found: list[ExtractedMemory] = []
    for piece in pieces:
        try:
            found.extend(extractor.extract(piece, checked))
        except Exception as exc:  # someone else's code, maybe a model over a network
            report.failed = True
            report.warnings.append(f"the extractor failed ({type(exc).__name__}: {exc})")
        if isinstance(extractor, ReportsFailures) and extractor.last_error:
            report.failed = True
            report.warnings.append(f"the extractor failed: {extractor.last_error}")
        if report.failed:
            report.warnings.append("nothing was captured; every stored memory is as it was")
            return [], report
    found = unique_memories(keep_types(found, cfg.types))
    if checked == "summary":
        found = [m for m in found if m.type == "session-summary"][:1]
    report.extracted = len(found)
    return found, report


def _pieces(
    messages: Sequence[Message], mode: ExtractionMode, window: Window, report: CaptureReport
) -> list[list[Message]]:
    """What the extractor is shown, call by call: in ``normal`` mode every message, in
    overlapping windows; otherwise the mode's one window. Fills the report's window fields."""
    if mode != "normal":
        shown = prepare(messages, mode, window)
        report.used = len(shown)
        if shown:
            start = len(messages) - len(shown) if mode == "summary" else 0
            report.windows = [[start, start + len(shown)]]
        return [shown] if shown else []
    kept = cleaned(messages)
    pieces: list[list[Message]] = []
    read: set[int] = set()
    for start, end in split_windows([len(m.content) for _, m in kept], window):
        part = kept[start:end]
        shown = prepare([m for _, m in part], mode, Window(None, window.chars))
        if sum(len(m.content) for m in shown) < sum(len(m.content) for _, m in part):
            report.warnings.append(
                f"message {part[-1][0] + 1} is longer than [capture] normal_chars "
                f"({window.chars}); only its last {window.chars} characters were read"
            )
        pieces.append(shown)
        report.windows.append([part[0][0], part[-1][0] + 1])
        read.update(i for i, _ in part)
    report.used = len(read)
    report.unseen = len(kept) - len(read)
    if report.unseen:
        report.warnings.append(f"{report.unseen} messages were not read by any window")
    return pieces


def _too_short(messages: Sequence[Message], mode: ExtractionMode, cfg: CaptureConfig) -> str:
    if mode == "init":
        return "" if messages else "no project files to read"
    needed = cfg.summary_min_messages if mode == "summary" else cfg.min_messages
    if len(messages) < needed:
        return f"{len(messages)} messages, {mode} mode needs at least {needed}"
    chars = sum(len(m.content) for m in messages)
    if mode == "normal" and chars < cfg.min_chars:
        return f"{chars} characters, fewer than [capture] min_chars ({cfg.min_chars})"
    return ""


def _store(
    writer: Writer, item: ExtractedMemory, scope: Scope, source: str, tags: Sequence[str]
) -> StoredMemory:
    return remember(
        writer,
        item.content,
        title=item.title,
        type=item.type,
        scope=scope,
        tags=[*item.tags, *tags],
        source=source,
        importance=item.importance,
        subject=item.subject,
        attribute=item.attribute,
        value=item.value,
        # The extractor named it: a taken name keeps both, never refuses what a session found.
        on_collision="new",
    )


# --------------------------------------------------------------------------- reading input


class _JsonMessage(BaseModel):
    role: str
    content: str | list[dict[str, Any]]
    timestamp: str | None = None


def read_messages(raw: str, name: str) -> list[Message]:
    """Messages from JSON (``[{"role", "content"}]`` or ``{"messages": [...]}``; content a
    string or a list of ``{"type": "text", "text"}`` blocks) or a Claude Code transcript (JSON
    Lines). ``TranscriptError`` says what is wrong and where."""
    text = raw.strip()
    if not text:
        raise TranscriptError(f"{name} is empty; pass JSON messages or a transcript")
    try:
        data = json.loads(text)
    except ValueError:
        return _jsonl(text, name)
    items = data.get("messages") if isinstance(data, dict) else data
    if not isinstance(items, list):
        raise TranscriptError(
            f'{name} is JSON but not messages; give a list like [{{"role": "user", "content": '
            '"..."}] or {"messages": [...]}'
        )
    out = []
    for number, item in enumerate(items, 1):
        try:
            msg = _JsonMessage.model_validate(item)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"]) or "message"
            raise TranscriptError(
                f"{name}: message {number} is malformed ({where}: {problem['msg']}); each "
                'message needs "role" and "content"'
            ) from None
        if msg.role in ("tool", "function", "developer"):
            continue
        if msg.role not in ("user", "assistant", "system"):
            raise TranscriptError(
                f"{name}: message {number} has role {msg.role!r}; use user, assistant or system"
            )
        out.append(Message(role=msg.role, content=_text(msg.content), timestamp=msg.timestamp))
    return out


def _text(content: str | list[dict[str, Any]]) -> str:
    if isinstance(content, str):
        return content
    return "\n\n".join(
        b["text"] for b in content if b.get("type") == "text" and isinstance(b.get("text"), str)
    )


def _jsonl(text: str, name: str) -> list[Message]:
    """A Claude Code transcript, read by the same reader ``engram sessions`` uses."""
    from engram.ingest.sessions import registry

    first = text.splitlines()[0]
    try:
        json.loads(first)
    except ValueError:
        raise TranscriptError(
            f"{name} is neither JSON messages nor a JSON Lines transcript (line 1 is not JSON); "
            'give [{"role": "user", "content": "..."}] or a Claude Code .jsonl file'
        ) from None
    transcript = registry.load("claude-code").read_transcript(text.encode("utf-8"), name, "capture")
    if not transcript.turns:
        raise TranscriptError(
            f"{name} holds no user or assistant messages (is it a Claude Code transcript?)"
        )
    return [Message(role=t.role, content=t.text, timestamp=t.timestamp) for t in transcript.turns]


def project_files(root: Path, names: Sequence[str]) -> list[Message]:
    """``init`` mode's input: the project files that exist, one message each, in order."""
    out = []
    for name in names:
        path = root / name
        if not path.is_file():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if text.strip():
            out.append(Message(role="user", content=f"# File: {name}\n\n{text}"))
    return out


# --------------------------------------------------------------------------- sessions


class SessionCaptureReport(BaseModel):
    """What ``engram sessions --capture`` did, session by session."""

    sessions: int = 0
    captured: list[str] = Field(default_factory=list)
    unchanged: int = 0
    cooling: int = 0
    waiting: int = 0
    failed: list[str] = Field(default_factory=list)
    reports: list[CaptureReport] = Field(default_factory=list)
    warnings: list[str] = Field(default_factory=list)

    def summary(self) -> str:
        stored = sum(len(r.stored) for r in self.reports)
        return (
            f"captured {len(self.captured)} of {self.sessions} sessions ({stored} memories); "
            f"{self.unchanged} unchanged, {self.cooling} in cooldown, {self.waiting} too short "
            f"yet, {len(self.failed)} failed"
        )


def capture_sessions(writer: Writer, *, progress: Progress | None = None) -> SessionCaptureReport:
    """Capture every indexed session that grew since its last capture (module docstring)."""
    cfg = writer.config.capture
    report = SessionCaptureReport()
    sources = {s.agent: s for s in session_sources(writer.config)}
    docs = {
        d: doc
        for d, doc in writer.store.list_documents().items()
        if doc.metadata.get("source") == SOURCE
    }
    report.sessions = len(docs)
    now = time.time()
    with CaptureLog(writer.memory_dir) as log:
        seen = log.read()
        for done, (doc_id, doc) in enumerate(sorted(docs.items()), 1):
            if progress:
                progress(done, len(docs), doc_id)
            turns = doc.metadata.get("turns")
            turns = turns if isinstance(turns, int) else 0
            last = seen.get(doc_id)
            if last is not None and turns <= last.turns:
                report.unchanged += 1
                continue
            if last is not None and now - last.at < cfg.cooldown_seconds:
                report.cooling += 1
                continue
            try:
                messages = _session_messages(doc.metadata, sources)
            except (OSError, EngramError) as exc:
                report.failed.append(f"{doc_id}: {exc}")
                continue
            start = last.turns if last is not None else 0
            outcome = _capture_one(writer, doc_id, messages, start)
            report.reports.extend(outcome)
            if any(r.failed for r in outcome):
                report.failed.append(
                    f"{doc_id}: " + "; ".join(w for r in outcome for w in r.warnings)
                )
            elif all(r.skipped for r in outcome):
                report.waiting += 1
            else:
                log.record(doc_id, len(messages), now)
                report.captured.append(doc_id)
    return report


def _session_messages(meta: dict[str, Any], sources: dict[str, Any]) -> list[Message]:
    agent, session_id, location = meta.get("agent"), meta.get("session_id"), meta.get("transcript")
    source = sources.get(agent) if isinstance(agent, str) else None
    if (
        source is None
        or not isinstance(agent, str)
        or not isinstance(session_id, str)
        or not isinstance(location, str)
    ):
        raise TranscriptError(f"sessions of {agent!r} are no longer configured in [sessions]")
    transcript = source.load(SessionRef(agent, session_id, Path(location), ""))
    return [Message(role=t.role, content=t.text, timestamp=t.timestamp) for t in transcript.turns]


def _capture_one(
    writer: Writer, doc_id: str, messages: list[Message], start: int
) -> list[CaptureReport]:
    tag = f"{SESSION_TAG}{doc_id.removeprefix('sessions/')}"
    source = "capture:sessions"
    reports = [
        capture(writer, window, "normal", source=source, tags=[tag])
        for window in session_windows(messages[start:], writer.config.capture.normal_messages)
    ]
    if writer.config.capture.summaries:
        summary = capture(writer, messages, "summary", source=source, tags=[tag])
        reports.append(summary)
        _supersede_older_summaries(writer, tag, summary)
    return reports


def session_windows(messages: Sequence[Message], size: int) -> list[Sequence[Message]]:
    """The turns a session grew by, in consecutive windows of ``size`` messages, so a long
    session loses nothing to the window of one extraction. A short tail is read as the last
    ``size`` messages instead (overlapping the window before; a fact seen twice merges)."""
    windows_ = [messages[i : i + size] for i in range(0, len(messages), size)] or [messages]
    if len(windows_) > 1 and len(windows_[-1]) < size:
        windows_[-1] = messages[-size:]
    return windows_


def _supersede_older_summaries(writer: Writer, tag: str, report: CaptureReport) -> None:
    """A session has one live summary: the one just written replaces earlier ones."""
    newest = next((s for s in report.stored if s.type == "session-summary"), None)
    if newest is None:
        return
    older = [
        m.path for m in list_memories(writer, type="session-summary", tag=tag) if m.id != newest.id
    ]
    if older:
        supersede(writer, older, newest.id)
