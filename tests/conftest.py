"""Shared fixtures for cross-package tests: isolated config, vaults on disk, open memories."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from support import MemoryFactory, memory_factory


@pytest.fixture
def open_memory(tmp_path: Path) -> Iterator[MemoryFactory]:
    """Open a Memory rooted at tmp_path on the SQLite store (store, embedder and settings
    overridable). Tests that need no plugin live in core/tests, on the built-in memory store."""
    with memory_factory(tmp_path, "sqlite") as factory:
        yield factory


# The example plugin is not installed in the dev venv; core/tests/test_suite_selftest.py runs its
# tests with its src on the path, as a third party would.
collect_ignore = ["example_plugin"]
