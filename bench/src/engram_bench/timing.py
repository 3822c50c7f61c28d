"""Clocks and memory gauges: latency percentiles, and this process's resident memory (Linux
``/proc``; elsewhere the ``resource`` peak, which cannot be reset, is reported instead)."""

from __future__ import annotations

import contextlib
import math
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

_STATUS = Path("/proc/self/status")
_CLEAR_REFS = Path("/proc/self/clear_refs")


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) by linear interpolation, like ``numpy.percentile``."""
    if not values:
        return math.nan
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summarize_ms(samples_s: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / p99 / mean of durations given in seconds, in milliseconds."""
    ms = [s * 1000.0 for s in samples_s]
    return {
        "p50": percentile(ms, 50),
        "p95": percentile(ms, 95),
        "p99": percentile(ms, 99),
        "mean": sum(ms) / len(ms) if ms else math.nan,
        "n": float(len(ms)),
    }


def time_each(calls: Sequence[Callable[[], object]], warmup: int = 3) -> list[float]:
    """Run ``warmup`` calls untimed, then time every call (seconds each)."""
    for call in calls[:warmup]:
        call()
    out = []
    for call in calls:
        start = time.perf_counter()
        call()
        out.append(time.perf_counter() - start)
    return out


@dataclass
class Stopwatch:
    seconds: float = 0.0

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.seconds += time.perf_counter() - start


def _status_kb(field: str) -> float | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return float(line.split()[1])
    except OSError:
        return None
    return None


def rss_mb() -> float | None:
    """Resident memory now, in MiB (None where ``/proc`` is missing)."""
    kb = _status_kb("VmRSS")
    return None if kb is None else kb / 1024.0


def peak_rss_mb() -> float:
    """Peak resident memory since the last ``reset_peak_rss`` (or process start), in MiB."""
    kb = _status_kb("VmHWM")
    if kb is not None:
        return kb / 1024.0
    import resource

    peak = float(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak / (1024.0 * 1024.0) if sys.platform == "darwin" else peak / 1024.0


def reset_peak_rss() -> bool:
    """Start a new peak-memory window (Linux: ``5 > /proc/self/clear_refs``). False when the
    platform cannot, in which case ``peak_rss_mb`` is the whole process's peak."""
    try:
        _CLEAR_REFS.write_text("5")
    except OSError:
        return False
    return True


def folder_bytes(path: Path) -> int:
    """Bytes of every file under ``path`` (a file's own size if ``path`` is a file)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for root, _, files in os.walk(path):
        for name in files:
            with contextlib.suppress(OSError):
                total += (Path(root) / name).stat().st_size
    return total
