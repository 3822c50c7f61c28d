"""Every distribution this repository ships, written once: its folder, the parts it registers and
what its tests need.

Read by the registry (which distribution provides an uninstalled part), the install hints, the
noxfile (one ``plugin`` session per plugin) and a test on ``requirements-dev.txt``, so a new store
is its folder, one line here and one in ``requirements-dev.txt``. Standard library only: the
noxfile loads this file by path, in an environment without engram.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Distribution:
    """One distribution of the repository.

    ``parts`` are the ``(kind, name)`` pairs it registers, for the hint an unknown name gets;
    ``plugin`` says whether the noxfile tests it alone (core + it); ``test_extras`` and
    ``test_packages`` are what its tests need besides (other folders of this repository).
    """

    name: str
    folder: str
    parts: tuple[tuple[str, str], ...] = ()
    plugin: bool = True
    test_extras: tuple[str, ...] = ()
    test_packages: tuple[str, ...] = ()


# The integrations' tests run every store of this repository.
_EVERY_STORE = (
    "./backends/sqlite",
    "./backends/lancedb",
    "./backends/chroma",
    "./backends/postgres[testing]",
)
_TESTING = ("testing",)

DISTRIBUTIONS: tuple[Distribution, ...] = (
    Distribution("engram-kit", "kit", plugin=False),
    Distribution("engram-kit-core", "core", plugin=False),
    Distribution("engram-sqlite", "backends/sqlite", parts=(("store", "sqlite"),)),
    Distribution(
        "engram-lancedb", "backends/lancedb", parts=(("store", "lancedb"),), test_extras=_TESTING
    ),
    Distribution("engram-chroma", "backends/chroma", parts=(("store", "chroma"),)),
    Distribution(
        "engram-postgres", "backends/postgres", parts=(("store", "postgres"),), test_extras=_TESTING
    ),
    Distribution(
        "engram-local",
        "embedders/local",
        parts=(("embedder", "local"), ("embedder", "local-int8")),
    ),
    Distribution(
        "engram-openai",
        "embedders/openai",
        parts=(("embedder", "openai"),),
        test_extras=_TESTING,
        test_packages=("./backends/sqlite",),
    ),
    Distribution(
        "engram-voyage", "embedders/voyage", parts=(("embedder", "voyage"),), test_extras=_TESTING
    ),
    Distribution(
        "engram-llm",
        "extractors/llm",
        parts=(("extractor", "llm"),),
        test_extras=("testing", "anthropic", "google"),
        test_packages=("./backends/sqlite",),
    ),
    Distribution(
        "engram-llamaindex",
        "integrations/llamaindex",
        test_extras=_TESTING,
        test_packages=_EVERY_STORE,
    ),
    Distribution(
        "engram-langchain",
        "integrations/langchain",
        test_extras=_TESTING,
        test_packages=_EVERY_STORE,
    ),
    Distribution(
        "engram-bench",
        "bench",
        test_extras=_TESTING,
        test_packages=("./backends/sqlite", "./backends/postgres[testing]"),
    ),
)

BY_NAME: dict[str, Distribution] = {d.name: d for d in DISTRIBUTIONS}


def providing(kind: str, name: str) -> Distribution | None:
    """The distribution of this repository that registers the ``kind`` named ``name``, if any."""
    for dist in DISTRIBUTIONS:
        if (kind, name) in dist.parts:
            return dist
    return None


# -- install hints (what a user can really run to get a part engram ships separately) --
# Until the distributions are published, only a checkout installs them, so every hint names the
# checkout path first and the registry name second.
# Distribution → its folder in the engram repository (engram.distributions holds the facts).
CHECKOUT_PATHS: dict[str, str] = {d.name: d.folder for d in DISTRIBUTIONS}


def install_hint(distribution: str, extra: str | None = None) -> str:
    """``pip install -e ./backends/lancedb (once published: pip install engram-lancedb)``."""
    path = f"./{CHECKOUT_PATHS[distribution]}"
    if extra is None:
        return f"pip install -e {path} (once published: pip install {distribution})"
    return (
        f"pip install -e '{path}[{extra}]' (once published: pip install '{distribution}[{extra}]')"
    )
