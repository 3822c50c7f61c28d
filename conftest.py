"""Every test of every package: no test reads or writes the developer's own user-wide memory
folder ($XDG_DATA_HOME/engram/memory, i.e. ~/.local/share/engram/memory) or reads their config
and ENGRAM_* overrides (user config file, ENGRAM_CONFIG, ENGRAM_LOAD_PLUGINS,
ENGRAM_TRACE_PLUGINS), and one fixture,
``fake_api``, serves every test that talks to a provider's HTTP API (OpenAI, Voyage, chat).

This file is the root conftest, so pytest loads it for every run from the repository, whole or
one package (`pytest embedders/openai/tests`, the nox sessions); the fakes themselves live in
tests/fake_apis, outside every distribution."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from fake_apis import FakeApi, StartApi


@pytest.fixture(autouse=True)
def _isolated_user(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("xdg-data")))
    home = tmp_path_factory.mktemp("user-config")
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(home / "config.toml"))
    for var in ("ENGRAM_CONFIG", "ENGRAM_LOAD_PLUGINS", "ENGRAM_TRACE_PLUGINS"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def fake_api() -> Iterator[StartApi]:
    """``fake_api(wire)``: a started fake API speaking ``wire`` (see tests/fake_apis); every one
    is stopped after the test, and what a handler raised fails it."""
    # Imported here: pytest-httpserver is a test dependency of the packages that talk HTTP, not
    # of core, whose tests (`nox -s core`) run without it.
    from fake_apis import FakeApi

    started: list[FakeApi[Any]] = []

    def start(wire: Any) -> FakeApi[Any]:
        api = FakeApi(wire).start()
        started.append(api)
        return api

    yield start
    for api in started:
        api.stop()
    for api in started:
        api.check()
