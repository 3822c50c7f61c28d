"""The one distribution table (``engram.distributions``) stays true: requirements-dev.txt installs
every distribution it lists with what its tests need, the noxfile's plugin sessions are its
plugins, and every part it names is registered by that distribution."""

from __future__ import annotations

import re
import runpy
from pathlib import Path

import pytest

from engram.distributions import BY_NAME, DISTRIBUTIONS, Distribution, providing
from engram.plugins import build_registry, get_plugin_manager
from engram.registry import KINDS, Kind
from support import REPO

# ``-e ./backends/lancedb[testing]`` → folder, extras.
EDITABLE = re.compile(r"^-e \./(?P<folder>[\w./-]+?)(?:\[(?P<extras>[\w,-]+)\])?$")


def dev_requirements(path: Path = REPO / "requirements-dev.txt") -> dict[str, set[str]]:
    """The editable lines of requirements-dev.txt: folder → extras."""
    found: dict[str, set[str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("-e "):
            match = EDITABLE.match(line.strip())
            assert match, f"requirements-dev.txt: {line!r} is not '-e ./folder[extras]'"
            extras = match["extras"]
            found[match["folder"]] = set(extras.split(",")) if extras else set()
    return found


def test_requirements_dev_installs_every_distribution_of_the_table_and_no_other() -> None:
    assert set(dev_requirements()) == {d.folder for d in DISTRIBUTIONS}


@pytest.mark.parametrize("dist", DISTRIBUTIONS, ids=lambda d: d.name)
def test_requirements_dev_installs_what_each_distributions_tests_need(dist: Distribution) -> None:
    """A developer's venv runs every plugin's tests: its test extras are installed, and the other
    folders they need are distributions of the table installed with their extras too."""
    installed = dev_requirements()
    assert set(dist.test_extras) <= installed[dist.folder], dist.name
    for package in dist.test_packages:
        match = EDITABLE.match(f"-e {package}")
        assert match, package
        assert match["folder"] in installed, package
        extras = set(match["extras"].split(",")) if match["extras"] else set()
        assert extras <= installed[match["folder"]], package


def test_the_noxfile_has_one_session_per_plugin_of_the_table() -> None:
    noxfile = runpy.run_path(str(REPO / "noxfile.py"))
    plugins = noxfile["PLUGINS"]
    assert {p.name for p in plugins.values()} == {d.name for d in DISTRIBUTIONS if d.plugin}
    assert {name: p.folder for name, p in plugins.items()}["lancedb"] == "backends/lancedb"
    assert "kit" not in plugins and "core" not in plugins  # core has a session of its own


def test_every_part_of_the_table_is_registered_by_its_distribution() -> None:
    registry = build_registry(get_plugin_manager())
    parts = [(kind, name, d.name) for d in DISTRIBUTIONS for kind, name in d.parts]
    assert len(parts) >= 9
    for kind, name, dist in parts:
        entry = registry.get(_kind(kind), name)
        assert entry.distribution == dist, (kind, name)
    # And the other way: every part a distribution of this repository registers is in the table.
    for entry in registry.entries():
        if entry.distribution in BY_NAME and entry.distribution != "engram-kit-core":
            assert providing(entry.kind, entry.name) == BY_NAME[entry.distribution], entry


def test_a_part_no_distribution_provides_has_no_distribution() -> None:
    assert providing("store", "qdrant") is None
    assert providing("embedder", "sqlite") is None  # the kind matters, not the name alone
    assert providing("store", "sqlite") == BY_NAME["engram-sqlite"]


def _kind(kind: str) -> Kind:
    assert kind in KINDS, kind
    return kind  # narrowed to Kind by the membership test
