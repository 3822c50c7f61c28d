"""The shape of the code, checked on every run: no import cycle between modules (an import
inside a function or under TYPE_CHECKING counts: deferring an import hides a cycle, it does not
remove it), none between the floors of a package either (its folders and top-level modules:
``engram.ingest`` must not import ``engram.writer`` while ``writer`` imports ``ingest``, even
when no single module closes the loop), and no module over 500 lines outside the conformance
suite."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 500
# The conformance suites are long lists of small tests a third party runs as one class.
LONG_ALLOWED = {"engram/testing/store_suite.py"}


def source_roots() -> list[Path]:
    """Every ``src`` folder of the workspace's distributions."""
    return sorted(p for p in [*REPO.glob("*/src"), *REPO.glob("*/*/src")] if p.is_dir())


def modules() -> dict[str, Path]:
    """Dotted module name → file, for every module of every distribution."""
    found: dict[str, Path] = {}
    for root in source_roots():
        for path in root.rglob("*.py"):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imported(name: str, path: Path, known: dict[str, Path]) -> Iterator[str]:
    """The workspace modules ``name`` imports, wherever the import statement is."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            # ``from pkg import mod`` imports the submodule when there is one.
            targets = [
                f"{base}.{a.name}" if f"{base}.{a.name}" in known else base for a in node.names
            ]
        else:
            continue
        for target in targets:
            if target in known and target != name:
                yield target


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: set(imported(name, path, known)) for name, path in known.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle (first module repeated at the end), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (cycle := visit(nxt)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (cycle := visit(start)):
            return cycle
    return None


def unit_of(module: str) -> str:
    """The floor a module stands on: its package's folder or top-level module
    (``engram.ingest.sessions.sync`` → ``engram.ingest``, ``engram.writer`` → itself)."""
    return ".".join(module.split(".")[:2])


def unit_graph(graph: dict[str, set[str]]) -> dict[str, set[str]]:
    """The import graph between units: one arrow wherever any module of one imports any
    module of the other."""
    units: dict[str, set[str]] = {}
    for name, targets in graph.items():
        unit = unit_of(name)
        units.setdefault(unit, set()).update(t for t in map(unit_of, targets) if t != unit)
    return units


def arrows_between(graph: dict[str, set[str]], source: str, target: str) -> list[str]:
    """The module imports that make up one unit arrow, to name them in a failure."""
    return sorted(
        f"{name} -> {t}"
        for name, targets in graph.items()
        if unit_of(name) == source
        for t in targets
        if unit_of(t) == target
    )


def test_the_check_sees_the_workspace_and_finds_a_planted_cycle() -> None:
    graph = import_graph()
    assert {"engram.memory", "engram.memories", "engram_sqlite.store"} <= set(graph)
    assert "engram.writer" in graph["engram.memories"]
    planted = {**graph, "engram.writer": {*graph["engram.writer"], "engram.memory"}}
    cycle = find_cycle(planted)
    assert cycle is not None and cycle[0] == cycle[-1] and "engram.memory" in cycle


def test_the_unit_check_finds_a_loop_no_module_closes() -> None:
    graph = import_graph()
    assert unit_of("engram.ingest.sessions.sync") == "engram.ingest"
    units = unit_graph(graph)
    assert "engram.memory_chunks" in units["engram.writer"]
    assert "engram.ingest" in units["engram.memory_chunks"]
    # A session reader importing the writer: no module cycle (nothing the writer imports reads
    # sessions), but the ingest floor would stand both under and over the writer.
    reader = "engram.ingest.sessions.sync"
    planted = {**graph, reader: {*graph[reader], "engram.writer"}}
    assert find_cycle(planted) is None
    cycle = find_cycle(unit_graph(planted))
    assert cycle is not None and {"engram.ingest", "engram.writer"} <= set(cycle)


def test_no_module_imports_itself_back() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_folder_or_module_imports_its_own_importer() -> None:
    graph = import_graph()
    cycle = find_cycle(unit_graph(graph))
    if cycle is not None:
        steps = [arrows_between(graph, a, b) for a, b in pairwise(cycle)]
        pytest.fail(
            "these floors import each other: "
            + " -> ".join(cycle)
            + "; through "
            + "; ".join(", ".join(s) for s in steps)
        )


@pytest.mark.parametrize("root", source_roots(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_is_over_500_lines(root: Path) -> None:
    long = {
        str(p.relative_to(root)): n
        for p in root.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and str(p.relative_to(root)) not in LONG_ALLOWED
    }
    assert long == {}, f"split these modules along their seams: {long}"
