"""The ``[store]`` options of the Postgres backend, validated by core against this model."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

ENV_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]*$"
# A schema is an identifier we quote (psycopg.sql.Identifier); keep it to what people type.
SCHEMA_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,62}$"
# Measured (2 shared cores, PostgreSQL 18 + pgvector 0.8.5, 384 dims): an exact scan takes about
# 2.5 ms per 1,000 chunks (≈ 25 ms at 10K, 45-50 ms at 20K); an HNSW search ≈ 12 ms at
# ef_search 100. Past 10K chunks the index is faster; below it, exact search costs little more.
DEFAULT_HNSW_THRESHOLD = 10_000


class PostgresOptions(BaseModel):
    """Which PostgreSQL to use and how.

    - ``dsn_env`` names the environment variable holding the connection string (a libpq URI or
      ``key=value`` string). The DSN, and so the password, never goes into a config file, a log
      line or an error message. libpq parameters pass through it: ``sslmode=verify-full``,
      ``sslrootcert=...``, ``application_name=...``, ``options=...``, ``target_session_attrs``.
    - ``namespace`` keeps many projects apart in one database: it is stored as data (a row of
      ``<schema>.namespaces``), never spliced into SQL, so any text is a valid namespace.
    - ``schema`` is the PostgreSQL schema holding engram's tables (created on first use).
    - ``connect_timeout`` bounds how long an unreachable server is waited for, in seconds.
    - ``pool_min`` / ``pool_max`` size the connection pool of one process.
    - ``hnsw_threshold``: a namespace with more chunks than this gets an HNSW index
      (``vector_cosine_ops``) and searches it; below it, search is exact (a scan is fast
      and exact for that many rows). ``ef_search`` is HNSW's candidate list size per search.
    """

    # The field is schema_ (``schema`` is a BaseModel name): configs say and dumps show "schema".
    model_config = ConfigDict(
        extra="forbid", frozen=True, populate_by_name=True, serialize_by_alias=True
    )

    dsn_env: str = Field(default="ENGRAM_POSTGRES_DSN", pattern=ENV_PATTERN)
    namespace: str = Field(default="default", min_length=1, max_length=200)
    schema_: str = Field(default="engram", pattern=SCHEMA_PATTERN, alias="schema")
    connect_timeout: float = Field(default=10.0, ge=1.0, le=120.0)
    pool_min: int = Field(default=1, ge=0, le=64)
    pool_max: int = Field(default=4, ge=1, le=64)
    hnsw_threshold: int = Field(default=DEFAULT_HNSW_THRESHOLD, ge=0, le=1_000_000_000)
    ef_search: int = Field(default=100, ge=1, le=1000)
    hnsw_m: int = Field(default=16, ge=2, le=100)
    hnsw_ef_construction: int = Field(default=64, ge=4, le=1000)

    @model_validator(mode="after")
    def _pool_bounds(self) -> PostgresOptions:
        if self.pool_min > self.pool_max:
            raise ValueError(f"pool_min ({self.pool_min}) exceeds pool_max ({self.pool_max})")
        if "\x00" in self.namespace:
            raise ValueError("namespace cannot contain a NUL character")
        return self

    @property
    def pg_schema(self) -> str:
        """The PostgreSQL schema (the field is ``schema_`` because ``schema`` is a pydantic
        name; config files and constructors say ``schema``)."""
        return self.schema_
