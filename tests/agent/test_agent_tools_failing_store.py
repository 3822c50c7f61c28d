"""A store failing under a tool is a tool error, never a crash: the SQLite store, once closed,
fails every call (the built-in memory store keeps working after ``close``, so this one stays
with the persistent store; the other tool tests: core/tests/agent/test_agent_tools.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.tools.toolbox import Toolbox
from support import MemoryFactory, write_vault


@pytest.fixture
def box(tmp_path: Path, open_memory: MemoryFactory) -> Toolbox:
    write_vault(
        tmp_path, {"notes/deploy.md": "# Deploy\n\nRoll back a bad deploy with make rollback.\n"}
    )
    memory = open_memory()
    memory.index()
    return Toolbox(memory)


def test_a_failing_part_is_a_tool_error_not_a_crash(box: Toolbox) -> None:
    box.memory.store.close()  # every store call now fails inside the tool
    result = box.call("memory_stats", {})
    assert not result.ok and "memory_stats" in result.text
