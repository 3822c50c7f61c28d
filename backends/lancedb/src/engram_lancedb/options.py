"""The ``[store]`` options of the LanceDB backend, validated by core against this model."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator

AnnIndex = Literal["ivf_hnsw_sq", "ivf_pq", "none"]
# Object stores LanceDB reaches through its own client (``db://`` LanceDB Cloud is not a folder
# of tables and is not supported).
OBJECT_STORE_SCHEMES = frozenset({"s3", "s3+ddb", "gs", "az", "abfs", "abfss"})


class LanceDBOptions(BaseModel):
    """Where the tables live and how the store maintains them.

    - ``path``: the folder of an embedded store (relative paths are relative to the project root).
    - ``uri``: object storage instead of a folder, e.g. ``s3://bucket/engram``; then
      ``storage_options`` carries the endpoint, keys and region (or set the usual ``AWS_*``
      variables). ``uri`` wins over ``path`` when both are set.
    - ``optimize_every``: write calls between automatic ``optimize()`` runs (0 turns them off).
    - ``optimize_rows``: rows written (upserted or deleted) that trigger an automatic
      ``optimize()`` however few the calls were: the keyword index covers only the rows present
      at the last optimize, and every keyword search scans the newer ones (0 turns it off).
    - ``optimize_growth``: the rows trigger grows with the table, to ``optimize_growth`` times
      the rows present at the last optimize when that is more than ``optimize_rows``. Each
      optimize rewrites the small files into the big one, so a fixed trigger makes a bulk
      import quadratic; a growing one keeps it linear (0 keeps the trigger fixed).
    - ``keep_versions_minutes``: how long old table versions survive an ``optimize()``.
    - ``ann_threshold``: vectors a table must hold before an ANN index is built; below it vector
      search is exact brute force.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: Path = Path(".engram/lancedb")
    uri: str | None = None
    storage_options: dict[str, str] = Field(default_factory=dict, repr=False)
    read_consistency_seconds: float | None = Field(default=5.0, ge=0)
    optimize_every: int = Field(default=100, ge=0)
    optimize_rows: int = Field(default=2000, ge=0)
    optimize_growth: float = Field(default=0.25, ge=0)
    keep_versions_minutes: float = Field(default=60.0, ge=0)
    ann_threshold: int = Field(default=100_000, ge=256)
    ann_index: AnnIndex = "ivf_hnsw_sq"
    ann_ef: int = Field(default=400, ge=1)
    ann_refine_factor: int = Field(default=5, ge=1)
    ann_nprobes: int = Field(default=20, ge=1)
    fts_language: str = "English"
    fts_stem: bool = True

    @field_validator("uri")
    @classmethod
    def _object_store_uri(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = urlsplit(value)
        if parts.scheme not in OBJECT_STORE_SCHEMES or not parts.netloc:
            schemes = ", ".join(sorted(f"{s}://" for s in OBJECT_STORE_SCHEMES))
            raise ValueError(
                f"{value!r} is not an object-storage URI ({schemes}bucket/prefix); "
                f"for a local folder set `path` instead"
            )
        return value

    @field_validator("storage_options", mode="before")
    @classmethod
    def _as_strings(cls, value: Any) -> Any:
        """TOML gives ``allow_http = true`` as a bool; LanceDB wants every value as a string."""
        if not isinstance(value, dict):
            return value
        return {
            str(k): (str(v).lower() if isinstance(v, bool) else str(v)) for k, v in value.items()
        }

    @property
    def remote(self) -> bool:
        return self.uri is not None

    def target(self) -> str:
        """What to hand to ``lancedb.connect``: the URI, or the folder."""
        return self.uri if self.uri is not None else str(self.path)

    def consistency(self) -> timedelta | None:
        if self.read_consistency_seconds is None:
            return None
        return timedelta(seconds=self.read_consistency_seconds)
