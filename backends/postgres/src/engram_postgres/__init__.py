"""engram-postgres: an engram store on PostgreSQL + pgvector, shared by many projects and machines.

Every ``engram`` command loads every plugin, so the store is registered by its path: psycopg is
imported only when a Postgres store is actually opened. The store is ``engram_postgres.store``'s
``PostgresStore``.
"""

from __future__ import annotations

from engram import Register, hookimpl
from engram_postgres.options import PostgresOptions

__all__ = ["PostgresOptions", "register_stores"]


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "postgres"``."""
    register("postgres", "engram_postgres.store:PostgresStore", options=PostgresOptions)
