"""The ``[store]`` options of the SQLite backend, validated by core against this model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Driver = Literal["auto", "sqlite3", "sqlean"]
MEMORY = ":memory:"


class SQLiteOptions(BaseModel):
    """Where the index lives and how to open it.

    ``path`` may be ``":memory:"`` (also after core has made it relative to the project root) for a
    throw-away index. ``driver`` forces a SQLite build; ``auto`` picks the first that can load
    sqlite-vec (see the README).
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path = Path(".engram/index.sqlite")
    driver: Driver = "auto"
    busy_timeout_ms: int = Field(default=5000, ge=0, le=3_600_000)
    # From this many vectors hybrid search runs its keyword half on a second connection while
    # the vector half scans (0: always). Below it the thread hand-off cost more than it saved.
    parallel_hybrid_from: int = Field(default=20_000, ge=0)

    @property
    def in_memory(self) -> bool:
        return self.path.name == MEMORY

    def vectors_path(self) -> Path | None:
        """The side matrix file beside the index (None for an in-memory index)."""
        return None if self.in_memory else self.path.with_name(self.path.name + "-vectors")

    def stamps_path(self) -> Path | None:
        """The stamp cache file beside the index (None for an in-memory index)."""
        return None if self.in_memory else self.path.with_name(self.path.name + "-stamps")

    def target(self) -> str:
        """What to hand to ``connect``: the file path, or ``":memory:"``."""
        return MEMORY if self.in_memory else str(self.path)
