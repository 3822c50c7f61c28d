"""Progress of long runs (``engram index``, ``engram rebuild``).

In a terminal, a Rich bar redrawn in place. Anywhere else (CI, a pipe, ``2> index.log``), one
plain line on stderr every ``ENGRAM_PROGRESS_SECONDS`` (default 5): often enough that a CI job
never looks hung and a human tailing a log sees it move, rare enough that an hour-long run
writes 720 lines. Time, not a file count, sets the pace, so it is the same for a fast local
embedder and a slow API. Every line also goes to this module's log. Runs of fewer than
``PROGRESS_MIN_FILES`` files show nothing: they end before anyone would look.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from engram.cli.common import err_console
from engram.errors import ConfigError

PROGRESS_MIN_FILES = 50
INTERVAL_ENV = "ENGRAM_PROGRESS_SECONDS"
DEFAULT_INTERVAL = 5.0

log = logging.getLogger(__name__)


class Tracker:
    """Where a run is (files done of total) and how fast it goes since its current phase began:
    a rebuild has two, the vault and then the sessions. Called as the run's progress callback."""

    def __init__(self, count_chunks: Callable[[], int], interval: float) -> None:
        self.count_chunks = count_chunks
        self.interval = interval
        self.done = 0
        self.total = 0
        self.started = self.last_line = time.monotonic()
        self.show: Callable[[int, int, str, str | None], None] = lambda *_: None

    def __call__(self, done: int, total: int, path: str) -> None:
        now = time.monotonic()
        if total != self.total or done < self.done:  # a new phase
            self.started = self.last_line = now
        self.done, self.total = done, total
        if total < PROGRESS_MIN_FILES:
            return
        line = None
        if now - self.last_line >= self.interval:
            self.last_line = now
            line = self.line()
            log.info(line)
        self.show(done, total, path, line)

    def line(self) -> str:
        """Files, chunks, rate and ETA in one plain line."""
        elapsed = time.monotonic() - self.started
        rate = self.done / elapsed if elapsed > 0 else 0.0
        eta = _duration((self.total - self.done) / rate) if rate > 0 else "unknown"
        return (
            f"indexing: {self.done}/{self.total} files ({100 * self.done // self.total}%), "
            f"{self.count_chunks()} chunks in the store, {rate:.1f} files/s, ETA {eta}"
        )


@contextmanager
def track(count_chunks: Callable[[], int]) -> Iterator[Tracker]:
    """A tracker shown as a bar in a terminal and as plain lines on stderr elsewhere."""
    tracker = Tracker(count_chunks, _interval())
    if not err_console.is_terminal:
        tracker.show = _print_line
        yield tracker
        return
    bar = Progress(
        TextColumn("indexing"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("{task.description}"),
        console=err_console,
        transient=True,
    )
    task = bar.add_task("", total=None)

    def draw(done: int, total: int, path: str, line: str | None) -> None:
        if not bar.live.is_started:
            bar.start()
        bar.update(task, completed=done, total=total, description=path[-40:])

    tracker.show = draw
    try:
        yield tracker
    finally:
        bar.stop()


def _print_line(done: int, total: int, path: str, line: str | None) -> None:
    if line is not None:
        err_console.print(line, highlight=False, soft_wrap=True)


def _interval() -> float:
    raw = os.environ.get(INTERVAL_ENV, "")
    if not raw.strip():
        return DEFAULT_INTERVAL
    try:
        seconds = float(raw)
    except ValueError:
        seconds = -1.0
    if not seconds > 0:
        raise ConfigError(f"{INTERVAL_ENV} must be a number of seconds above 0, got {raw!r}")
    return seconds


def _duration(seconds: float) -> str:
    """``95`` → ``1m35s``; ``4000`` → ``1h06m``."""
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"
