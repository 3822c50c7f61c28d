"""What users install: one name with a working default, a license in every wheel, hints that name
real folders, and a uv workspace whose every member resolves to its folder."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from engram.distributions import CHECKOUT_PATHS, install_hint
from support import REPO


def _project(folder: str) -> dict[str, Any]:
    with (REPO / folder / "pyproject.toml").open("rb") as f:
        return tomllib.load(f)


@pytest.mark.parametrize(("dist", "folder"), sorted(CHECKOUT_PATHS.items()))
def test_every_distribution_has_its_name_license_and_readme(dist: str, folder: str) -> None:
    project = _project(folder)["project"]
    assert project["name"] == dist
    assert project["license"] == "Apache-2.0" and project["license-files"] == ["LICENSE"]
    license_text = (REPO / folder / "LICENSE").read_text(encoding="utf-8")
    assert license_text == (REPO / "LICENSE").read_text(encoding="utf-8")
    readme = (REPO / folder / project["readme"]).read_text(encoding="utf-8")
    assert "## Install" in readme and "## Test" in readme, folder
    assert f"-e ./{folder}" in readme, folder


@pytest.mark.parametrize(("dist", "folder"), sorted(CHECKOUT_PATHS.items()))
def test_every_distribution_says_who_what_and_for_which_python(dist: str, folder: str) -> None:
    """What an index page shows beside the name: authors, keywords and classifiers that are true
    of the package (the Python it requires; typed only when it ships ``py.typed``)."""
    project = _project(folder)["project"]
    assert project["authors"] and project["keywords"], dist
    classifiers = set(project["classifiers"])
    assert project["requires-python"] == ">=3.11"
    assert "Programming Language :: Python :: 3.11" in classifiers, dist
    typed = any((REPO / folder).glob("src/*/py.typed"))
    assert ("Typing :: Typed" in classifiers) == typed, dist
    assert not any(c.startswith("License ::") for c in classifiers), "license is the expression"


def test_the_installed_name_brings_core_the_default_store_and_embedder() -> None:
    needs = _project("kit")["project"]["dependencies"]
    assert {n.split("==")[0] for n in needs} == {"engram-kit-core", "engram-sqlite", "engram-local"}


def test_plugins_depend_on_the_core_by_its_own_name_never_the_registrys_engram() -> None:
    for folder in CHECKOUT_PATHS.values():
        for need in _project(folder)["project"]["dependencies"]:
            assert not need.startswith("engram ") and need != "engram", (folder, need)


def test_every_workspace_member_resolves_to_its_folder() -> None:
    """The members' globs find every distribution (a new store's folder needs no edit here);
    a member another member depends on resolves to its folder, never to a registry."""
    root = _project(".")
    sources = root["tool"]["uv"]["sources"]
    members = [p for glob in root["tool"]["uv"]["workspace"]["members"] for p in REPO.glob(glob)]
    projects = [_project(str(p.relative_to(REPO)))["project"] for p in members]
    names = {project["name"] for project in projects}
    assert names == set(CHECKOUT_PATHS)
    needed = {
        re.split(r"[\[<>=!~; ]", need, maxsplit=1)[0]
        for project in projects
        for need in [
            *project["dependencies"],
            *(n for extra in project.get("optional-dependencies", {}).values() for n in extra),
        ]
    }
    assert names & needed <= set(sources) <= names
    assert "engram-kit-core" in sources and "engram-sqlite" in sources
    assert all(v == {"workspace": True} for v in sources.values())
    assert (REPO / "uv.lock").is_file()


def test_an_install_hint_names_a_folder_that_exists_and_the_published_name() -> None:
    hint = install_hint("engram-lancedb")
    assert hint == "pip install -e ./backends/lancedb (once published: pip install engram-lancedb)"
    assert Path(REPO / "backends" / "lancedb" / "pyproject.toml").is_file()
    extra = install_hint("engram-kit-core", "agent")
    assert extra.startswith("pip install -e './core[agent]'")
