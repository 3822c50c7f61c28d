"""Helpers for the agent-integration tests (memories, tools, MCP, sessions, recall, watch)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.filters import Eq
from engram.memory import Memory
from engram.models import Chunk, InputType
from engram.protocols import Embedder

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sessions"
OPENCODE_FIXTURE = FIXTURES / "opencode" / "storage"
CLAUDE_FIXTURE = FIXTURES / "claude" / "projects"


def copy_fixtures(dest: Path) -> tuple[Path, Path]:
    """Writable copies of both transcript trees: (opencode storage, claude projects)."""
    opencode = shutil.copytree(OPENCODE_FIXTURE, dest / "opencode" / "storage")
    claude = shutil.copytree(CLAUDE_FIXTURE, dest / "claude" / "projects")
    return Path(opencode), Path(claude)


def sessions_config(opencode: Path, claude: Path, *, enabled: bool = True) -> dict[str, Any]:
    """The fixture trees as ``[sessions]``; their sessions ran in folders of other projects
    (``/home/me/...``), so every session counts (``scope = "all"``)."""
    return {
        "sessions": {
            "enabled": enabled,
            "scope": "all",
            "dirs": {"opencode": str(opencode), "claude-code": str(claude)},
        }
    }


def all_chunks(memory: Memory) -> list[Chunk]:
    return [c for batch in memory.store.iter_chunks() for c in batch]


def chunks_of(memory: Memory, document_id: str) -> list[Chunk]:
    return [c for c in all_chunks(memory) if c.document_id == document_id]


def frontmatter(path: Path) -> dict[str, Any]:
    return dict(read_frontmatter(path.read_text(encoding="utf-8")).metadata)


def count_source(memory: Memory, source: str) -> int:
    return memory.store.count(Eq(field="source", value=source))


def wait_until(condition: Callable[[], bool], timeout: float = 20.0, what: str = "") -> None:
    """Poll ``condition`` until true; fail after ``timeout`` seconds (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what or condition}")
        time.sleep(0.02)


class RecordingEmbedder:
    """A real embedder (delegating) that keeps every text it is asked to embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.model = inner.model
        self.dimension = inner.dimension
        self.seen: list[str] = []

    def embed(self, texts: Sequence[str], input_type: InputType = "document") -> list[list[float]]:
        self.seen.extend(texts)
        return self.inner.embed(texts, input_type)


def nested_private(secret: str, depth: int, after_inner: bool, shout: bool) -> str:
    """The secret inside ``depth`` + 1 nested private spans, possibly after an inner closing
    tag (``<private>a <private>b</private> SECRET</private>``), tags in odd case and spacing."""
    open_tag, close_tag = ("< PRIVATE >", "</Private >") if shout else ("<private>", "</private>")
    inner = f"{open_tag}b{close_tag} {secret}" if after_inner else secret
    span = f"{open_tag}{inner}{close_tag}"
    for _ in range(depth):
        span = f"{open_tag}x {span} y{close_tag}"
    return span


def capture_finished(project: Path, event: str = "session-start", timeout: float = 600) -> None:
    """Wait until the detached capture a hook of ``event`` started has ended its round: its
    log names the event (a round's result, or that another capture took it over) and no
    capture holds the project's pid file. What a test checks after a hook is then what every
    process the hook started did, not what the capture had not yet done."""
    folder = project / ".engram"

    def ended() -> bool:
        log = folder / "capture.log"
        said = log.exists() and f"{event}:" in log.read_text(encoding="utf-8", errors="replace")
        return said and not (folder / "capture.pid").exists()

    wait_until(ended, timeout, f"the detached capture of {event} to finish")
