"""Parts registered by dotted path (``register(name, "module:Class", options=...)``): imported on
the first build, never on load; a path that names nothing is a ``PluginError`` that names the
path; a missing dependency of a real module stays the ``ImportError`` it is."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ConfigDict

from engram.errors import PluginError
from engram.hookspecs import hookimpl
from engram.plugins import build_registry, describe_plugins, get_plugin_manager
from engram.registry import Register, Registry

PACKAGE = "dotted_sample_pkg"


class LabelOptions(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: str = "x"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A package on sys.path with a light module, a part module and one that needs a missing
    dependency; removed from sys.modules afterwards so each test sees a first import."""
    root = tmp_path / PACKAGE
    root.mkdir()
    (root / "__init__.py").write_text("", encoding="utf-8")
    (root / "parts.py").write_text(
        textwrap.dedent("""
            class Part:
                def __init__(self, options, **bound):
                    self.options, self.bound = options, bound
        """),
        encoding="utf-8",
    )
    (root / "broken.py").write_text("import dotted_no_such_dependency\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield root
    for name in [m for m in sys.modules if m.split(".")[0] == PACKAGE]:
        del sys.modules[name]


def registry_with(**paths: str) -> Registry:
    """A registry with the built-ins plus one plugin registering ``paths`` as embedders."""

    class Plugin:
        @hookimpl
        def register_embedders(self, register: Register) -> None:
            for name, path in paths.items():
                register(name, path, options=LabelOptions, token=name)

    pm = get_plugin_manager(load_entry_points=False)
    pm.register(Plugin(), name="dotted-test")
    return build_registry(pm)


def build(registry: Registry, name: str) -> Any:
    entry = registry.get("embedder", name)
    return entry.build(entry.options(label=name))


def test_a_part_is_imported_on_its_first_build_with_its_options_and_bound_keywords(
    package: Path,
) -> None:
    registry = registry_with(good=f"{PACKAGE}.parts:Part")
    assert f"{PACKAGE}.parts" not in sys.modules
    row = next(r for r in describe_plugins(registry) if r["name"] == "good")
    assert row["module"] == f"{PACKAGE}.parts"
    part = build(registry, "good")
    assert f"{PACKAGE}.parts" in sys.modules
    assert type(part).__name__ == "Part"
    assert part.options == LabelOptions(label="good") and part.bound == {"token": "good"}


@pytest.mark.parametrize("path", ["no colon", "pkg.mod", "pkg:", ":Name", "pkg:Na-me", "1pkg:A"])
def test_a_malformed_path_is_an_error_when_the_plugin_registers_it(path: str) -> None:
    with pytest.raises(PluginError, match=re.escape("package.module:Class")):
        registry_with(bad=path)


@pytest.mark.parametrize(
    ("path", "says"),
    [
        (f"{PACKAGE}.nowhere:Part", "names a module that does not exist"),
        (f"{PACKAGE}_absent.parts:Part", "names a module that does not exist"),
        (f"{PACKAGE}.parts:Missing", "names 'Missing', which"),
    ],
)
def test_a_path_that_names_nothing_is_a_plugin_error_naming_it(
    package: Path, path: str, says: str
) -> None:
    registry = registry_with(bad=path)  # registering imports nothing, so it cannot fail yet
    with pytest.raises(PluginError, match=says) as info:
        build(registry, "bad")
    assert repr(path) in str(info.value)


def test_a_missing_dependency_of_a_real_module_stays_an_import_error(package: Path) -> None:
    registry = registry_with(broken=f"{PACKAGE}.broken:Part")
    with pytest.raises(ModuleNotFoundError) as info:
        build(registry, "broken")
    assert info.value.name == "dotted_no_such_dependency"
    assert not isinstance(info.value, PluginError)
