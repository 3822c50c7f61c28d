"""Every test of every package: no test reads or writes the developer's own user-wide memory
folder ($XDG_DATA_HOME/engram/memory, i.e. ~/.local/share/engram/memory)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _isolated_user_memory(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
