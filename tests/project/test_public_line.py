"""The public line: docs and plugins import only from ``engram`` (and ``engram.testing``), and
``engram`` names in ``__all__`` everything they need, loaded on first use.

Every other module is internal (docs/architecture.md, "The public line"); a doc or a plugin that
imports one breaks the day that module moves, so these tests fail first. ``bench`` is a tool of
this repository, not a plugin: it may import internals and is left out.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

import pytest

import engram

REPO = Path(__file__).resolve().parents[2]
PLUGIN_SOURCES = sorted(
    [
        *REPO.glob("backends/*/src"),
        *REPO.glob("embedders/*/src"),
        *REPO.glob("extractors/*/src"),
        *REPO.glob("integrations/*/src"),
        REPO / "tests" / "example_plugin" / "src",
    ]
)
DOCS = sorted(
    [
        REPO / "README.md",
        *(REPO / "docs").rglob("*.md"),
        *(root.parents[0] / "README.md" for root in PLUGIN_SOURCES),
    ]
)
FENCE = re.compile(r"^```(\w*)[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)
# An import statement anywhere in a text (a shell line's ``python -c "..."`` included).
TEXT_IMPORT = re.compile(r"\b(?:from\s+(engram(?:\.\w+)+)\s+import|import\s+(engram(?:\.\w+)+))")


def past_the_line(module: str) -> bool:
    """Whether importing ``module`` reaches behind ``engram``'s public names."""
    allowed = module in ("engram", "engram.testing") or module.startswith("engram.testing.")
    return (module == "engram" or module.startswith("engram.")) and not allowed


def python_imports(source: str) -> list[tuple[int, str]]:
    """(line, module) of every import statement in ``source``, wherever it stands."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            # ``from engram import models`` reaches a module too.
            if node.module == "engram":
                found += [
                    (node.lineno, f"engram.{a.name}")
                    for a in node.names
                    if a.name not in engram.__all__
                ]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def crossings_in_markdown(text: str) -> list[str]:
    """Each import past the line in the fenced code blocks of a markdown text."""
    bad: list[str] = []
    for match in FENCE.finditer(text):
        language, body = match.group(1), match.group(2)
        line = text.count("\n", 0, match.start()) + 2
        if language == "python":
            try:
                imports = python_imports(body)
            except SyntaxError:  # an excerpt with ``...``: read it as text below
                imports = []
            bad += [f"line {line + n - 1}: {m}" for n, m in imports if past_the_line(m)]
        for hit in TEXT_IMPORT.finditer(body):
            module = hit.group(1) or hit.group(2)
            where = f"line {line + body.count(chr(10), 0, hit.start())}: {module}"
            if past_the_line(module) and where not in bad:
                bad.append(where)
    return bad


def test_the_checks_catch_a_planted_crossing() -> None:
    planted = (
        "```python\nfrom engram import Memory\nfrom engram.models import Chunk\n```\n"
        '```sh\npython -c "import engram.memory"\n```\n'
        "```python\nfrom engram import models\nfrom engram.testing import StoreSuite\n```\n"
    )
    assert crossings_in_markdown(planted) == [
        "line 3: engram.models",
        "line 6: engram.memory",
        "line 9: engram.models",
    ]


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_docs_import_only_from_the_public_line(doc: Path) -> None:
    bad = crossings_in_markdown(doc.read_text(encoding="utf-8"))
    assert bad == [], (
        f"{doc.relative_to(REPO)} imports internal modules {bad}: import the name from `engram` "
        "(add it to engram.__all__ deliberately if it is missing)"
    )


@pytest.mark.parametrize("root", PLUGIN_SOURCES, ids=lambda p: str(p.relative_to(REPO)))
def test_plugins_import_only_from_the_public_line(root: Path) -> None:
    files = sorted(root.rglob("*.py"))
    assert files, f"no plugin source under {root}"
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in files
        for line, module in python_imports(path.read_text(encoding="utf-8"))
        if past_the_line(module)
    ]
    assert bad == [], (
        f"plugins reach past `engram` {bad}: import from `engram` (or `engram.testing`)"
    )


def _declared() -> tuple[set[str], set[str]]:
    """The names ``engram/__init__.py`` imports for type checkers, and those it loads lazily."""
    tree = ast.parse(Path(engram.__file__).read_text(encoding="utf-8"))
    typed: set[str] = set()
    lazy: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.If):  # if TYPE_CHECKING:
            typed |= {
                a.asname or a.name
                for n in node.body
                if isinstance(n, ast.ImportFrom)
                for a in n.names
            }
        if isinstance(node, ast.AnnAssign) and isinstance(node.value, ast.Dict):
            lazy |= {
                k.value
                for k in node.value.keys
                if isinstance(k, ast.Constant) and isinstance(k.value, str)
            }
    return typed, lazy


def test_every_public_name_is_declared_typed_and_loads() -> None:
    typed, lazy = _declared()
    public = set(engram.__all__) - {"__version__"}
    assert typed == lazy == public, "engram/__init__.py: TYPE_CHECKING, _LAZY and __all__ differ"
    for name in sorted(public):
        assert getattr(engram, name) is not None, name
    typo = "Chunks"
    with pytest.raises(AttributeError, match="no attribute 'Chunks'"):
        getattr(engram, typo)


def test_import_engram_loads_no_public_module() -> None:
    """The names load on first use: ``import engram`` alone (every host hook, ``--version``)
    imports neither pydantic nor numpy nor any engram module."""
    code = (
        "import sys, engram; "
        "print(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('pydantic', 'numpy') or m.startswith('engram.')))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    assert out.stdout.strip() == "[]"


EXAMPLE = re.compile(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", re.DOTALL)


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_examples_in_docs_are_the_files_verbatim(doc: Path) -> None:
    """A block marked ``<!-- example: path -->`` is that file of the repository, to the byte."""
    for path, body in EXAMPLE.findall(doc.read_text(encoding="utf-8")):
        assert body == (REPO / path).read_text(encoding="utf-8"), f"{doc.name}: {path} differs"
