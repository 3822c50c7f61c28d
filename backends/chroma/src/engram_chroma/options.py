"""The ``[store]`` options of the Chroma backend, validated by core against this model."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["embedded", "server"]
# Chroma's own rule for collection names, less room for the suffixes of our two helper collections.
COLLECTION_PATTERN = r"^[A-Za-z0-9](?:[A-Za-z0-9._-]{1,480}[A-Za-z0-9])$"


class ChromaOptions(BaseModel):
    """Which Chroma to use and how.

    - ``mode = "embedded"`` keeps the data in the folder ``path`` (Chroma's ``PersistentClient``);
      ``mode = "server"`` talks to a running ``chroma run`` at ``host``:``port`` (``HttpClient``).
    - ``collection`` names the chunk collection; the store adds ``<collection>__engram_meta``
      (identity, document records) and ``<collection>__engram_log`` (the change log that keeps
      every client's keyword index in step).
    - ``token_env`` names an environment variable holding a bearer token for a server that
      requires one (the token itself never goes into a config file).
    - ``hnsw_*`` are Chroma's HNSW settings, applied when the collection is created.
    - ``keyword_cache`` is a folder for the keyword index file; by default it lives in ``path``
      when embedded and in memory for a server.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Mode = "embedded"
    path: Path = Path(".engram/chroma")
    host: str = Field(default="127.0.0.1", min_length=1)
    port: int = Field(default=8000, ge=1, le=65535)
    ssl: bool = False
    token_env: str | None = Field(default=None, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    tenant: str = Field(default="default_tenant", min_length=1)
    database: str = Field(default="default_database", min_length=1)
    collection: str = Field(default="engram", pattern=COLLECTION_PATTERN)
    hnsw_ef_search: int = Field(default=100, ge=1, le=100_000)
    hnsw_ef_construction: int = Field(default=100, ge=1, le=100_000)
    hnsw_max_neighbors: int = Field(default=16, ge=2, le=512)
    keyword_cache: Path | None = None

    @property
    def where(self) -> str:
        """The store in words, for error messages."""
        scheme = "https" if self.ssl else "http"
        if self.mode == "server":
            return f"the Chroma server at {scheme}://{self.host}:{self.port}"
        return f"the embedded Chroma in {self.path}"
