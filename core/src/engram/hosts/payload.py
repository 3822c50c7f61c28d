"""The host's JSON on stdin, read within a time limit and leniently: what every hook reads
first (here alone, so the per-prompt hook reads it without importing the runner)."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from typing import IO, Any

PAYLOAD_LIMIT = 1 << 20  # bytes of host JSON read from stdin, at most
PAYLOAD_WAIT = 2.0  # seconds to wait for the host to send its JSON and close stdin


def read_payload(stream: IO[Any] | None, wait: float) -> dict[str, Any] | None:
    """The host's JSON object on stdin, or None: no stdin, a terminal, garbage, or nothing
    within ``wait`` seconds (the read goes on in a thread nobody waits for)."""
    if stream is None:
        return None
    try:
        if stream.isatty():
            return None
    except (OSError, ValueError):  # a closed stdin
        return None
    try:
        fd = stream.fileno()
    except (OSError, ValueError, AttributeError):  # an in-memory stream: it cannot block
        data = stream.read(PAYLOAD_LIMIT)
        return _parse(data.encode() if isinstance(data, str) else data)
    box: list[bytes] = []
    reader = threading.Thread(target=lambda: box.append(_read_fd(fd)), daemon=True)
    reader.start()
    reader.join(wait)
    return _parse(box[0]) if box else None


def _read_fd(fd: int) -> bytes:
    """Read to end of file on a raw descriptor (no buffer lock a daemon thread could hold)."""
    chunks: list[bytes] = []
    size = 0
    with contextlib.suppress(OSError):
        while size < PAYLOAD_LIMIT and (chunk := os.read(fd, 65536)):
            chunks.append(chunk)
            size += len(chunk)
    return b"".join(chunks)


def _parse(data: bytes | None) -> dict[str, Any] | None:
    try:
        value = json.loads((data or b"").decode("utf-8", "replace"))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
