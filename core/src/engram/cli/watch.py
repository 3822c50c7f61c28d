"""``engram watch``: keep the index in step with the files while you (or an agent) edit them.

The vault, the memory folder and, when ``[sessions] enabled``, the transcript folders are
watched with watchfiles. Changes are debounced (grouped until the files are quiet for a moment),
then the ordinary incremental index runs, which only re-reads what changed. Only markdown and
transcript files count, so the index's own writes (``.engram/``) never trigger a run.
"""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from watchfiles import Change, DefaultFilter, watch

from engram.errors import EngramError
from engram.ingest.report import IndexReport
from engram.ingest.sessions.sync import session_sources
from engram.keeper import Keeper
from engram.memories.files import TEMP_SUFFIX
from engram.memory import Memory

log = logging.getLogger(__name__)

DEBOUNCE_MS = 1600
QUIET_MS = 300
READY_TICK_MS = 200
MARKDOWN = (".md", ".markdown")
TRANSCRIPTS = (".json", ".jsonl")


@dataclass(frozen=True)
class WatchEvent:
    """One re-index run: which source, why, and its report (or the error that stopped it)."""

    source: str  # "vault" or "sessions"
    changed: int
    report: IndexReport | None = None
    error: str | None = None


class _Relevant(DefaultFilter):
    """Markdown under the vault and memory folders, JSON under transcript folders, and a new
    folder under either.

    A new folder counts because a file written into it at once can come before the watch on
    the folder does: inotify then reports the folder and never the file (``remember`` into a
    type folder that did not exist yet was missed now and then). The run it triggers is the
    ordinary incremental index, which finds the file whatever the events said."""

    def __init__(self, vault: list[Path], sessions: list[Path]) -> None:
        super().__init__()
        self.vault = vault
        self.sessions = sessions

    def __call__(self, change: Change, path: str) -> bool:
        if not super().__call__(change, path) or path.endswith(TEMP_SUFFIX):
            return False
        p = Path(path)
        if change == Change.added and p.is_dir():
            return _under(p, [*self.vault, *self.sessions]) and ".engram" not in p.parts
        if p.suffix.lower() in MARKDOWN and _under(p, self.vault):
            return ".engram" not in p.parts
        return p.suffix.lower() in TRANSCRIPTS and _under(p, self.sessions)


def _under(path: Path, roots: list[Path]) -> bool:
    return any(path == r or path.is_relative_to(r) for r in roots)


def watch_memory(
    memory: Memory | Keeper,
    *,
    stop_event: threading.Event | None = None,
    on_event: Callable[[WatchEvent], None] | None = None,
    on_ready: Callable[[], None] | None = None,
    lock: threading.RLock | None = None,
    debounce_ms: int = DEBOUNCE_MS,
    quiet_ms: int = QUIET_MS,
    sessions: bool | None = None,
) -> None:
    """Index once, then re-index on every debounced batch of changes until ``stop_event``.

    ``on_ready`` is called once the watcher is running: edits made after it are never missed.
    A failing run is reported through ``on_event`` and watching goes on.
    """
    keeper = memory if isinstance(memory, Keeper) else Keeper(memory, lock)
    guard = keeper.lock
    memory = keeper.memory
    vault = [r for r in memory.default_roots() if r.exists()]
    with_sessions = memory.config.sessions.enabled if sessions is None else sessions
    session_roots = (
        [s.root.resolve() for s in session_sources(memory.config) if s.root.is_dir()]
        if with_sessions
        else []
    )
    emit = on_event or (lambda event: None)

    def index() -> IndexReport:  # through the keeper: an index replaced or damaged is healed
        return keeper.run(lambda m: m.index())

    def index_sessions() -> IndexReport:
        return keeper.run(lambda m: m.index_sessions())

    _run(index, "vault", 0, guard, emit)
    if with_sessions:
        _run(index_sessions, "sessions", 0, guard, emit)
    ready = False
    for changes in watch(
        *vault,
        *session_roots,
        watch_filter=_Relevant(vault, session_roots),
        debounce=debounce_ms,
        step=quiet_ms,
        stop_event=stop_event,
        rust_timeout=READY_TICK_MS,
        yield_on_timeout=True,
        # Ctrl+C reaches the caller (the CLI exits 130, like every command); watchfiles would
        # otherwise log "KeyboardInterrupt caught" and return as if stopped on request.
        raise_interrupt=True,
    ):
        if not ready:
            ready = True
            if on_ready:
                on_ready()
        if not changes:
            continue
        paths = [Path(p) for _, p in changes]
        in_vault = [p for p in paths if _under(p, vault)]
        in_sessions = [p for p in paths if _under(p, session_roots)]
        if in_vault:
            _run(index, "vault", len(in_vault), guard, emit)
        if in_sessions:
            _run(index_sessions, "sessions", len(in_sessions), guard, emit)


def _run(
    job: Callable[[], IndexReport],
    source: str,
    changed: int,
    lock: threading.RLock,
    emit: Callable[[WatchEvent], None],
) -> None:
    try:
        with lock:
            report = job()
    except EngramError as exc:
        log.warning("re-indexing %s failed: %s", source, exc)
        emit(WatchEvent(source, changed, error=str(exc)))
        return
    emit(WatchEvent(source, changed, report=report))


@contextlib.contextmanager
def background_watcher(
    memory: Memory | Keeper,
    *,
    lock: threading.RLock | None = None,
    ready_timeout: float | None = None,
    join_timeout: float = 30.0,
) -> Iterator[threading.Thread]:
    """Run ``watch_memory`` in a daemon thread for the duration of a ``with`` block.

    The block starts at once (a server must answer its client while a large vault is still
    being indexed) unless ``ready_timeout`` asks to wait for the watcher first.
    """
    stop = threading.Event()
    ready = threading.Event()
    thread = threading.Thread(
        target=watch_memory,
        args=(memory,),
        kwargs={"stop_event": stop, "on_ready": ready.set, "lock": lock},
        name="engram-watch",
        daemon=True,
    )
    thread.start()
    try:
        if ready_timeout is not None:
            ready.wait(ready_timeout)
        yield thread
    finally:
        stop.set()
        thread.join(join_timeout)
