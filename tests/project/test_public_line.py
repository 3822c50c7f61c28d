"""The public line: docs and plugins import only from ``engram`` (and ``engram.testing``), and
``engram`` names in ``__all__`` everything they need, loaded on first use.

Every other module is internal (docs/architecture.md, "The public line"); a doc or a plugin that
imports one breaks the day that module moves, so these tests fail first. ``bench`` is a tool of
this repository, not a plugin: it may import internals and is left out.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import pytest

import engram

REPO = Path(__file__).resolve().parents[2]
# Every plugin's folder: its source, and its tests and benchmarks too (a third party copies
# those first, and a test that imports an internal breaks the day that module moves).
PLUGINS = sorted(
    [
        *REPO.glob("backends/*/"),
        *REPO.glob("embedders/*/"),
        *REPO.glob("extractors/*/"),
        *REPO.glob("integrations/*/"),
        REPO / "tests" / "example_plugin",
    ]
)
PLUGIN_SOURCES = [root / "src" for root in PLUGINS]
DOCS = sorted(
    [
        REPO / "README.md",
        *(REPO / "docs").rglob("*.md"),
        *(root / "README.md" for root in PLUGINS),
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


def plugin_files(root: Path) -> list[Path]:
    """Every python file of a plugin's folder: source, tests, benchmarks, scripts."""
    skip = {".venv", "build", ".nox", "__pycache__"}
    return sorted(p for p in root.rglob("*.py") if not skip & set(p.relative_to(root).parts))


def test_plugin_files_reach_tests_and_benchmarks() -> None:
    chroma = plugin_files(REPO / "backends" / "chroma")
    assert REPO / "backends/chroma/benchmarks/speed.py" in chroma
    assert REPO / "backends/chroma/tests/conftest.py" in chroma


@pytest.mark.parametrize("root", PLUGINS, ids=lambda p: str(p.relative_to(REPO)))
def test_plugins_import_only_from_the_public_line(root: Path) -> None:
    files = plugin_files(root)
    assert any(root / "src" in p.parents for p in files), f"no plugin source under {root}"
    bad = [
        f"{path.relative_to(REPO)}:{line}: {module}"
        for path in files
        for line, module in python_imports(path.read_text(encoding="utf-8"))
        if past_the_line(module)
    ]
    assert bad == [], (
        f"plugins reach past `engram` {bad}: import from `engram` (or `engram.testing`)"
    )


def _typed() -> dict[str, str]:
    """What ``engram/__init__.py``'s ``TYPE_CHECKING`` block gives type checkers, as
    ``_PUBLIC`` writes it: name -> "module:attribute"."""
    tree = ast.parse(Path(engram.__file__).read_text(encoding="utf-8"))
    blocks = [
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    ]
    assert len(blocks) == 1, "one `if TYPE_CHECKING:` block"
    exported: dict[str, str] = {}
    hidden: dict[str, str] = {}  # imported without `as`: private under mypy, unless assigned
    for node in blocks[0].body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                if a.asname == a.name:
                    exported[a.name] = f"{node.module}:{a.name}"
                else:
                    assert a.asname is None, f"{a.name} as {a.asname}: mypy keeps it private"
                    hidden[a.name] = f"{node.module}:{a.name}"
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name):
            (target,) = node.targets
            assert isinstance(target, ast.Name)
            exported[target.id] = hidden.pop(node.value.id)
        else:
            raise AssertionError(f"unexpected in TYPE_CHECKING: {ast.unparse(node)}")
    assert hidden == {}, f"imported for type checkers but not public: {sorted(hidden)}"
    return exported


def test_the_typed_imports_are_the_table() -> None:
    assert _typed() == engram._PUBLIC


def test_every_public_name_is_listed_and_loads() -> None:
    assert engram.__all__ == ["__version__", *engram._PUBLIC]
    assert dir(engram) == sorted(engram.__all__)
    for name, where in engram._PUBLIC.items():
        module, _, attribute = where.partition(":")
        assert module.startswith("engram."), where
        assert getattr(engram, name) is getattr(importlib.import_module(module), attribute), name
    typo = "Chunks"
    with pytest.raises(AttributeError, match="no attribute 'Chunks'"):
        getattr(engram, typo)


ARCHITECTURE = REPO / "docs" / "architecture.md"
TABLE = re.compile(r"The names, by what needs them:\n\n((?:\|.*\n)+)")


def documented_names(text: str) -> list[str]:
    """The names in the second column of docs/architecture.md's table of the public line."""
    table = TABLE.search(text)
    assert table is not None, "docs/architecture.md lost its table of public names"
    rows = table.group(1).splitlines()[2:]  # past the header and its rule
    return [name for row in rows for name in re.findall(r"`(\w+)`", row.split("|")[2])]


def test_the_docs_table_is_the_public_line() -> None:
    named = documented_names(ARCHITECTURE.read_text(encoding="utf-8"))
    twice = sorted({n for n in named if named.count(n) > 1})
    assert twice == [], f"named twice in the table: {twice}"
    missing = sorted(set(engram._PUBLIC) - set(named))
    extra = sorted(set(named) - set(engram._PUBLIC))
    assert (missing, extra) == ([], []), (
        f"docs/architecture.md's table lacks {missing} and names {extra}, which `engram` lacks"
    )


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


# ``engram.NAME``, not a path's or a file's (``memory/engram.toml``, ``engram.exe``).
DOTTED = re.compile(r"(?<![\w./-])engram\.(\w+)")
FILE_TYPES = {"toml", "js", "sh", "exe", "json", "md", "log", "db", "sqlite", "yaml"}


def dotted_names_missing(text: str) -> list[str]:
    """``engram.NAME`` in a text where NAME is neither public nor a module of engram: a name the
    docs or a message promise that the line no longer has."""
    return sorted(
        {
            name
            for name in DOTTED.findall(text)
            if name not in engram._PUBLIC
            and name not in FILE_TYPES
            and name != "__version__"
            and importlib.util.find_spec(f"engram.{name}") is None
        }
    )


def test_the_dotted_check_catches_a_retired_name() -> None:
    text = "call engram.Memory.open, see engram.stamps, or engram.retired_helper(x)"
    assert dotted_names_missing(text) == ["retired_helper"]


@pytest.mark.parametrize(
    "path",
    [*DOCS, *sorted((REPO / "core" / "src" / "engram").rglob("*.py"))],
    ids=lambda p: str(p.relative_to(REPO)),
)
def test_names_the_docs_and_messages_promise_are_public(path: Path) -> None:
    """A name leaves the line with its mentions: docs and error messages that say
    ``engram.NAME`` (a CHANGELOG line says where it went)."""
    missing = dotted_names_missing(path.read_text(encoding="utf-8"))
    assert missing == [], f"{path.relative_to(REPO)} names engram.{missing}, which engram lacks"
