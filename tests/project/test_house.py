"""The shape of the code, checked on every run: no import cycle between modules (an import
inside a function or under TYPE_CHECKING counts: deferring an import hides a cycle, it does not
remove it); none between the floors of any package either, at every depth (a package's floors
are its folders and modules: ``engram.ingest`` must not import ``engram.memories`` while the
memory layer imports ``ingest``, nor ``memories/judge/`` ask ``memories/lifecycle/`` while the
plumbing asks the judge, even when no single module closes the loop); the core's top level a
few modules, none grouped only by a name prefix; and no module over 500 lines outside the
conformance suite. No list of files: the floors' order is whatever the imports make it."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from itertools import pairwise
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
MAX_LINES = 500
# The core's top level: the public line, the base types and the few modules every floor reads.
MAX_TOP_LEVEL = 20
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


def unit_of(module: str, package: str = "") -> str:
    """The floor a module stands on inside ``package``: the package's folder or module that
    holds it (inside ``engram``: ``engram.ingest.sessions.sync`` → ``engram.ingest``; inside
    ``engram.memories``: ``engram.memories.judge.dedup`` → ``engram.memories.judge``). Without a
    package, the floor among every distribution's top-level names (``engram`` itself included)."""
    depth = package.count(".") + 2 if package else 2
    return ".".join(module.split(".")[:depth])


def unit_graph(graph: dict[str, set[str]], package: str = "") -> dict[str, set[str]]:
    """The import graph between the floors of ``package``: one arrow wherever any module of one
    imports any module of the other. The package's own ``__init__`` is its face, no floor."""

    def inside(module: str) -> bool:
        return not package or module.startswith(package + ".")

    units: dict[str, set[str]] = {}
    for name, targets in graph.items():
        if not inside(name):
            continue
        unit = unit_of(name, package)
        units.setdefault(unit, set()).update(
            t for t in (unit_of(t, package) for t in targets if inside(t)) if t != unit
        )
    return units


def packages(graph: dict[str, set[str]]) -> list[str]:
    """Every package (a module with modules under it), at every depth, of every distribution."""
    return sorted({n.rpartition(".")[0] for n in graph if "." in n})


def arrows_between(
    graph: dict[str, set[str]], source: str, target: str, package: str = ""
) -> list[str]:
    """The module imports that make up one floor arrow, to name them in a failure."""
    return sorted(
        f"{name} -> {t}"
        for name, targets in graph.items()
        if unit_of(name, package) == source
        for t in targets
        if unit_of(t, package) == target
    )


def test_the_check_sees_the_workspace_and_finds_a_planted_cycle() -> None:
    graph = import_graph()
    assert {"engram.memory", "engram.memories.agent", "engram_sqlite.store"} <= set(graph)
    assert "engram.memories.writer" in graph["engram.memories.agent"]
    planted = {
        **graph,
        "engram.memories.writer": {*graph["engram.memories.writer"], "engram.memory"},
    }
    cycle = find_cycle(planted)
    assert cycle is not None and cycle[0] == cycle[-1] and "engram.memory" in cycle


def test_the_unit_check_finds_a_loop_no_module_closes() -> None:
    graph = import_graph()
    assert unit_of("engram.ingest.sessions.sync") == "engram.ingest"
    units = unit_graph(graph)
    assert "engram.ingest" in units["engram.memories"]
    # A session reader importing the writer: no module cycle (nothing the writer imports reads
    # sessions), but the ingest floor would stand both under and over the memory layer.
    reader = "engram.ingest.sessions.sync"
    planted = {**graph, reader: {*graph[reader], "engram.memories.writer"}}
    assert find_cycle(planted) is None
    cycle = find_cycle(unit_graph(planted))
    assert cycle is not None and {"engram.ingest", "engram.memories"} <= set(cycle)


def test_the_floors_of_a_package_are_found_at_every_depth() -> None:
    graph = import_graph()
    assert {"engram", "engram.memories", "engram.memories.judge", "engram.ingest.sessions"} <= set(
        packages(graph)
    )
    assert unit_of("engram.memories.judge.dedup", "engram.memories") == "engram.memories.judge"
    inner = unit_graph(graph, "engram.memories")
    assert "engram.memories.lifecycle" in inner["engram.memories.judge"]
    assert "engram.memory" not in inner and "engram.ingest" not in inner
    # The write plumbing asking the judge: no module cycle, but the two floors of the memory
    # layer would stand both under and over each other.
    io = "engram.memories.lifecycle.memory_io"
    planted = {**graph, io: {*graph[io], "engram.memories.judge.lexicon"}}
    assert find_cycle(planted) is None
    cycle = find_cycle(unit_graph(planted, "engram.memories"))
    assert cycle is not None
    assert {"engram.memories.judge", "engram.memories.lifecycle"} <= set(cycle)


def test_no_module_imports_itself_back() -> None:
    cycle = find_cycle(import_graph())
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])


def test_no_folder_or_module_imports_its_own_importer() -> None:
    graph = import_graph()
    for package in ["", *packages(graph)]:
        cycle = find_cycle(unit_graph(graph, package))
        if cycle is not None:
            steps = [arrows_between(graph, a, b, package) for a, b in pairwise(cycle)]
            pytest.fail(
                f"these floors of {package or 'the workspace'} import each other: "
                + " -> ".join(cycle)
                + "; through "
                + "; ".join(", ".join(s) for s in steps)
            )


def top_level(package: Path) -> list[str]:
    """The modules standing directly in a package's folder."""
    return sorted(p.stem for p in package.glob("*.py"))


def prefix_families(names: list[str]) -> dict[str, list[str]]:
    """Modules grouped only by a name prefix (``memory_files``, ``memory_types``, ``memory``):
    a package waiting to be made."""
    families: dict[str, list[str]] = {}
    for name in names:
        if not name.startswith("_"):
            families.setdefault(name.split("_")[0], []).append(name)
    return {head: group for head, group in families.items() if len(group) > 1}


def test_the_family_check_finds_a_prefix_family() -> None:
    assert prefix_families(["memory", "memory_files", "config", "api_embedder", "__init__"]) == {
        "memory": ["memory", "memory_files"]
    }


def test_the_core_top_level_is_a_few_floors_not_a_flat_list() -> None:
    names = top_level(REPO / "core/src/engram")
    assert "memory" in names and "__init__" in names
    assert len(names) <= MAX_TOP_LEVEL, f"{len(names)} modules at the core's top level: {names}"
    assert prefix_families(names) == {}, "make these families packages"


@pytest.mark.parametrize("root", source_roots(), ids=lambda p: str(p.relative_to(REPO)))
def test_no_module_is_over_500_lines(root: Path) -> None:
    long = {
        str(p.relative_to(root)): n
        for p in root.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
        and str(p.relative_to(root)) not in LONG_ALLOWED
    }
    assert long == {}, f"split these modules along their seams: {long}"
