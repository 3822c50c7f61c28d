"""Every hook (core's hookspecs.py and those plugins declare) is documented in
docs/plugins/hooks.md and exercised by a test.

The idea is datasette's ``test_plugin_hooks_have_tests``: adding a hook without its documentation
section and a test that names it fails here, and so does a section for a hook that is gone.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram import hookspecs
from engram.plugins import get_plugin_manager

REPO = Path(__file__).resolve().parents[2]
HOOKS_MD = REPO / "docs" / "plugins" / "hooks.md"
TEST_ROOTS = tuple(
    REPO / p for p in ("tests", "core/tests", "backends", "embedders", "extractors", "bench/tests")
)
THIS_FILE = Path(__file__).resolve()


def hook_specs() -> dict[str, Callable[..., Any]]:
    """Core's hooks, and those installed plugins declare (``register_hookspecs``)."""
    pm = get_plugin_manager()
    callers = (getattr(pm.hook, name) for name in dir(pm.hook) if not name.startswith("_"))
    return {c.name: c.spec.function for c in callers if c.spec is not None}


def signature_heading(fn: Callable[..., Any]) -> str:
    """``## name(arg, arg)``: the heading style datasette uses for its hook reference."""
    return f"## {fn.__name__}({', '.join(inspect.signature(fn).parameters)})"


def documented_headings() -> list[str]:
    text = HOOKS_MD.read_text(encoding="utf-8")
    return [line.rstrip() for line in text.splitlines() if re.match(r"## \w+\(.*\)$", line)]


def test_the_spec_module_declares_hooks() -> None:
    specs = hook_specs()
    assert {"register_stores", "register_embedders", "prepare_connection"} <= set(specs)
    # Backends are equal: a hook only SQLite calls is declared by engram-sqlite, not core.
    assert specs["prepare_connection"].__module__ == "engram_sqlite.hookspecs"
    assert not hasattr(hookspecs, "prepare_connection")


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_hook_is_documented_where_it_is_declared(name: str) -> None:
    doc = inspect.getdoc(hook_specs()[name])
    assert doc and doc.strip(), f"the hookspec {name!r} has no docstring: say what it is for"


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_hook_is_documented_with_its_signature(name: str) -> None:
    heading = signature_heading(hook_specs()[name])
    assert heading in documented_headings(), (
        f"{HOOKS_MD} has no section {heading!r}: add one saying what the hook is for, with an "
        f"example"
    )


def test_every_documented_hook_exists() -> None:
    expected = {signature_heading(fn) for fn in hook_specs().values()}
    stale = [h for h in documented_headings() if h not in expected]
    assert not stale, f"{HOOKS_MD} documents hooks no hookspec declares: {stale}"


def repo_test_files() -> list[Path]:
    files = [
        p.resolve()
        for root in TEST_ROOTS
        if root.is_dir()
        for p in root.rglob("test_*.py")
        if ".venv" not in p.parts and ".nox" not in p.parts
    ]
    return [p for p in files if p != THIS_FILE]


@pytest.mark.parametrize("name", sorted(hook_specs()))
def test_hook_is_exercised_by_a_test(name: str) -> None:
    pattern = re.compile(rf"\b{re.escape(name)}\b")
    users = [p for p in repo_test_files() if pattern.search(p.read_text(encoding="utf-8"))]
    assert users, (
        f"no test file under {', '.join(str(r) for r in TEST_ROOTS)} mentions the hook {name!r}: "
        f"write a test that implements or calls it"
    )
