"""The README's two commands are a promise to newcomers; keep them true."""

from __future__ import annotations

import re

from support import REPO


def _readme_commands() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```bash\n(.+?)\n```", text, flags=re.DOTALL)


def test_readme_starts_with_setup_then_test_command() -> None:
    setup, tests = _readme_commands()[:2]
    assert "engram index examples/vault" in setup and "engram search" in setup
    assert "pytest" in tests


def test_ci_runs_exactly_the_readme_test_command() -> None:
    tests = _readme_commands()[1]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    assert tests in ci.splitlines(), ".ci/run must run the README's test command verbatim"


def test_every_path_the_setup_command_names_exists() -> None:
    setup = _readme_commands()[0]
    for path in re.findall(r"\./([\w/.-]+)|(examples/vault)", setup):
        name = next(p for p in path if p)
        assert (REPO / name).exists(), name
    for name in re.findall(r"-r ([\w.-]+)", _readme_commands()[1]):
        assert (REPO / name).is_file(), name
