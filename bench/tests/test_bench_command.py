"""``engram bench`` comes from this package through core's ``register_commands`` hook: listed
in ``engram --help`` when installed, and a one-line install hint when it is not loaded."""

from __future__ import annotations

import os
import subprocess
import sys

from engram.plugins import get_plugin_manager


def engram(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **env},
        check=False,
    )


def test_the_installed_plugin_implements_register_commands() -> None:
    impls = get_plugin_manager().hook.register_commands.get_hookimpls()
    assert "engram_bench.plugin" in {impl.function.__module__ for impl in impls}


def test_engram_lists_bench_and_its_options() -> None:
    listing = engram("--help")
    assert listing.returncode == 0 and "bench" in listing.stdout
    assert "Not installed" not in listing.stdout
    help_text = engram("bench", "--help")
    assert help_text.returncode == 0
    assert "--quick" in help_text.stdout and "--peer-python" in help_text.stdout


def test_without_the_package_bench_says_how_to_install_it() -> None:
    # ENGRAM_LOAD_PLUGINS leaves engram-bench out, as if it were not installed.
    missing = engram("bench", "--quick", "--stores", "memory", ENGRAM_LOAD_PLUGINS="engram-sqlite")
    assert missing.returncode == 1
    lines = missing.stderr.strip().splitlines()
    assert len(lines) == 1 and "pip install -e ./bench" in lines[0]
    assert "Traceback" not in missing.stderr and missing.stdout == ""
