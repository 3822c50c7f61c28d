"""The README's usage example is a promise: run it as written, in a fresh project folder."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def test_readme_usage_example_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocks = re.findall(r"```python\n(.+?)\n```", README.read_text(encoding="utf-8"), re.DOTALL)
    assert len(blocks) == 1, "the README has one python example; this test runs it"
    monkeypatch.chdir(tmp_path)
    exec(compile(blocks[0], str(README), "exec"), {})  # its asserts check what it found
    assert not list((tmp_path / "collections" / "langchain").glob("*.md"))  # it deleted both
