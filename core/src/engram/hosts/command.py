"""The command a host runs: the absolute path of the ``engram`` that installed the hooks (a
host starts with its own PATH, where ``engram`` may be missing or another install), and the
markers that tell our hook entries from anyone else's."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

HOST_TIMEOUT = 60  # seconds: what the host's own timeout field gets
# What our runner may use of it: it gives up (exit 0, one warning) before the host kills it.
RUN_TIMEOUT = 55


def engram_argv() -> list[str]:
    """How to start this very ``engram``: its script, else ``python -m engram``."""
    script = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if script is not None and script.stem == "engram" and script.suffix in ("", ".exe"):
        found = shutil.which(str(script)) if not script.is_absolute() else str(script)
        if found:
            return [os.path.abspath(found)]
    beside = Path(sys.executable).parent / ("engram.exe" if os.name == "nt" else "engram")
    if beside.is_file():
        return [os.path.abspath(beside)]
    return [os.path.abspath(sys.executable), "-m", "engram"]


def run_argv(
    event: str, host: str, *, base: list[str] | None = None, config: Path | None = None
) -> list[str]:
    """``engram [--config FILE] hooks run EVENT --host HOST --timeout N`` as argv."""
    argv = list(base or engram_argv())
    if config is not None:
        argv += ["--config", str(config.resolve())]
    return [*argv, "hooks", "run", event, "--host", host, "--timeout", str(RUN_TIMEOUT)]


def shell_command(argv: list[str]) -> str:
    """``argv`` as one shell command line (Claude Code runs hook commands through a shell)."""
    if os.name == "nt":
        return subprocess.list2cmdline(argv)
    return shlex.join(argv)


def is_ours(command: object, event: str) -> bool:
    """Whether a host's hook command is an ``engram hooks run EVENT`` we wrote (any path)."""
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command, posix=os.name != "nt")
    except ValueError:
        return False
    for i in range(len(words) - 2):
        if words[i : i + 3] == ["hooks", "run", event] and _engram_before(words[:i]):
            return True
    return False


def _engram_before(words: list[str]) -> bool:
    """``words`` start an engram invocation: the ``engram`` script, or ``python -m engram``."""
    if not words:
        return False
    if Path(words[0].strip('"')).stem == "engram":
        return True
    return len(words) >= 3 and words[1:3] == ["-m", "engram"]
