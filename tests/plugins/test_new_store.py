"""A new store is one folder plus at most two edits (a line in ``engram.distributions``, a line in
requirements-dev.txt), and the folder alone already works.

The test writes a sample store distribution into its temp dir, laid out as ``backends/<name>/`` is
in this repository (pyproject, ``src/<module>/``, ``tests/``), builds and installs it with pip
into a private folder (never the shared venv), and then, with only that folder added to the path:
the store registers under its name by its dotted path, is not imported until it is built, and the
copy of its conformance file passes engram's whole store suite on a store built by the registry.
"""

from __future__ import annotations

import fnmatch
import json
import os
import subprocess
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from engram.testing import StoreSuite
from support import REPO

NAME = "sample"
DIST = "engram-sample"
MODULE = "engram_sample"

FILES = {
    "pyproject.toml": f"""
        [build-system]
        requires = ["hatchling>=1.25"]
        build-backend = "hatchling.build"

        [project]
        name = "{DIST}"
        version = "0.0.1"
        requires-python = ">=3.11"
        dependencies = ["engram-kit-core"]

        [project.entry-points.engram]
        {NAME} = "{MODULE}"

        [tool.hatch.build.targets.wheel]
        packages = ["src/{MODULE}"]
    """,
    f"src/{MODULE}/__init__.py": f'''
        """The sample store's plugin module: light, it names the store by its path."""

        from engram import Register, hookimpl
        from {MODULE}.options import SampleOptions


        @hookimpl
        def register_stores(register: Register) -> None:
            register("{NAME}", "{MODULE}.store:SampleStore", options=SampleOptions)
    ''',
    f"src/{MODULE}/options.py": """
        from pydantic import BaseModel, ConfigDict


        class SampleOptions(BaseModel):
            model_config = ConfigDict(extra="forbid")
            label: str = "sample"
    """,
    f"src/{MODULE}/store.py": f"""
        from engram import MemoryStore, MemoryStoreOptions
        from {MODULE}.options import SampleOptions


        class SampleStore(MemoryStore):
            def __init__(self, options: SampleOptions) -> None:
                super().__init__(MemoryStoreOptions())
                self.label = options.label
    """,
    "tests/test_conformance.py": f"""
        from collections.abc import Iterator

        import pytest

        from engram.plugins import build_registry, get_plugin_manager
        from engram.testing import StoreSuite


        class TestSampleStore(StoreSuite):
            @pytest.fixture
            def store(self) -> Iterator[object]:
                entry = build_registry(get_plugin_manager()).get("store", "{NAME}")
                store = entry.build(entry.options(label="conformance"))
                assert type(store).__module__ == "{MODULE}.store"
                yield store
                store.close()
    """,
}

PROBE = f"""
import json, sys
from engram.plugins import build_registry, describe_plugins, get_plugin_manager
registry = build_registry(get_plugin_manager())
row = next(r for r in describe_plugins(registry) if r["name"] == "{NAME}")
imported_before = "{MODULE}.store" in sys.modules
entry = registry.get("store", "{NAME}")
store = entry.build(entry.options(label="built"))
print(json.dumps({{"row": row, "imported_before": imported_before, "label": store.label,
                   "class": type(store).__name__}}))
"""


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(the sample store's folder, the private site it is installed into)."""
    root = tmp_path_factory.mktemp("repo")
    folder = root / "backends" / NAME
    for relative, text in FILES.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    site = tmp_path_factory.mktemp("sample-site")
    done = subprocess.run(
        [
            *(sys.executable, "-m", "pip", "install", "--quiet", "--no-deps"),
            *("--no-build-isolation", "--no-input", "--disable-pip-version-check"),
            *("--target", str(site), str(folder)),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return folder, site


def _env(site: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ENGRAM_")}
    env["PYTHONPATH"] = str(site)
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"  # only what the run needs (see test_suite_selftest)
    return env


def test_the_installed_folder_registers_its_store_by_path_and_imports_it_on_build(
    sample: tuple[Path, Path], tmp_path: Path
) -> None:
    _, site = sample
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        capture_output=True,
        text=True,
        env=_env(site),
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert found["row"]["distribution"] == DIST and found["row"]["version"] == "0.0.1"
    assert found["row"]["module"] == f"{MODULE}.store" and found["row"]["kind"] == "store"
    assert found["imported_before"] is False
    assert (found["class"], found["label"]) == ("SampleStore", "built")


def test_the_store_built_by_the_registry_passes_the_store_suite(
    sample: tuple[Path, Path], pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder, site = sample
    for key, value in _env(site).items():
        monkeypatch.setenv(key, value)
    for key in [k for k in os.environ if k.startswith("ENGRAM_")]:
        monkeypatch.delenv(key)
    source = (folder / "tests" / "test_conformance.py").read_text(encoding="utf-8")
    pytester.makepyfile(test_conformance=source)
    result = pytester.runpytest_subprocess(
        *("-p", "_hypothesis_pytestplugin", "-p", "no:cacheprovider", "-rfE"), timeout=600
    )
    assert result.ret == 0, result.stdout.str()
    assert result.parseoutcomes() == {"passed": _suite_size(StoreSuite)}


def test_the_repository_needs_no_edit_for_the_folder_but_the_table_and_dev_requirements() -> None:
    """The workspace members, ruff's and mypy's source globs and the house tests already find a
    folder under backends/; the two edits left are data (engram.distributions, requirements-dev)
    that tests/project/test_distributions.py checks against each other."""
    with (REPO / "pyproject.toml").open("rb") as f:
        root = tomllib.load(f)
    folder, src = f"backends/{NAME}", f"backends/{NAME}/src"
    assert any(fnmatch.fnmatch(folder, g) for g in root["tool"]["uv"]["workspace"]["members"])
    assert any(fnmatch.fnmatch(src, g) for g in root["tool"]["ruff"]["src"])
    assert any(fnmatch.fnmatch(src, g) for g in root["tool"]["mypy"]["files"])
    assert any(
        fnmatch.fnmatch(folder, f"{p}*") for p in root["tool"]["pytest"]["ini_options"]["testpaths"]
    )


def _suite_size(suite: type) -> int:
    """How many test items one subclass of ``suite`` yields (one per parameter set)."""
    total = 0
    for name in dir(suite):
        if name.startswith("test_"):
            items = 1
            for mark in getattr(getattr(suite, name), "pytestmark", []):
                if mark.name == "parametrize":
                    items *= len(mark.args[1])
            total += items
    return total
