"""The capture example in docs/memory-lifecycle.md, run as a reader would paste it: it must
capture something (a lone short message is below the documented min_messages / min_chars)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from support import REPO


def test_the_documented_stdin_capture_stores_a_memory(tmp_path: Path) -> None:
    doc = (REPO / "docs" / "memory-lifecycle.md").read_text(encoding="utf-8")
    [line] = re.findall(r"^echo '.*' \| engram capture -$", doc, flags=re.MULTILINE)
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    bin_dir = Path(sys.executable).parent
    proc = subprocess.run(
        ["bash", "-c", line],
        cwd=tmp_path,
        env={
            **os.environ,
            "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
            "ENGRAM_USER_CONFIG": str(tmp_path / "none.toml"),
        },
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert re.search(r"captured [1-9]\d* memories", proc.stdout), proc.stdout
    assert list((tmp_path / "memory").rglob("*.md"))
