"""Test-only: kill this process at a named point of a write, to prove a crash loses nothing.

``ENGRAM_TEST_CRASH_AT=after-new-file`` makes the process SIGKILL itself when the write reaches
the point of that name (see the calls of ``crash_point``). Unset, it costs one dict lookup.
Never set it outside tests.
"""

from __future__ import annotations

import os
import signal

CRASH_ENV = "ENGRAM_TEST_CRASH_AT"


def crash_point(name: str) -> None:
    """Die here, as kill -9 would, when the test asked for this point."""
    if os.environ.get(CRASH_ENV) == name:
        os.kill(os.getpid(), getattr(signal, "SIGKILL", signal.SIGTERM))
