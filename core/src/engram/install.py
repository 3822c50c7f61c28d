"""What a user can really run to get a part engram ships separately.

Until the distributions are published, only a checkout installs them, so every hint names the
checkout path first and the registry name second. One table (``engram.distributions``), so
hints never drift apart.
"""

from __future__ import annotations

from engram.distributions import DISTRIBUTIONS

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
