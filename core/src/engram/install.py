"""What a user can really run to get a part engram ships separately.

Until the distributions are published, only a checkout installs them, so every hint names the
checkout path first and the registry name second. One table, so hints never drift apart.
"""

from __future__ import annotations

# Distribution → its folder in the engram repository.
CHECKOUT_PATHS: dict[str, str] = {
    "engram-kit": "kit",
    "engram-kit-core": "core",
    "engram-sqlite": "backends/sqlite",
    "engram-lancedb": "backends/lancedb",
    "engram-chroma": "backends/chroma",
    "engram-postgres": "backends/postgres",
    "engram-local": "embedders/local",
    "engram-openai": "embedders/openai",
    "engram-voyage": "embedders/voyage",
    "engram-llm": "extractors/llm",
    "engram-langchain": "integrations/langchain",
    "engram-llamaindex": "integrations/llamaindex",
    "engram-bench": "bench",
}


def install_hint(distribution: str, extra: str | None = None) -> str:
    """``pip install -e ./backends/lancedb (once published: pip install engram-lancedb)``."""
    path = f"./{CHECKOUT_PATHS[distribution]}"
    if extra is None:
        return f"pip install -e {path} (once published: pip install {distribution})"
    return (
        f"pip install -e '{path}[{extra}]' (once published: pip install '{distribution}[{extra}]')"
    )
