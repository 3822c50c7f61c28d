"""engram-postgres: an engram store on PostgreSQL + pgvector, shared by many projects and machines.

Every ``engram`` command loads every plugin, so psycopg is imported only when a Postgres store is
actually opened.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engram import Register, hookimpl
from engram_postgres.options import PostgresOptions

if TYPE_CHECKING:
    from engram_postgres.store import PostgresStore

__all__ = ["PostgresOptions", "PostgresStore", "open_store", "register_stores"]


def open_store(options: PostgresOptions) -> PostgresStore:
    """The registered factory: imports psycopg on first use."""
    from engram_postgres.store import PostgresStore

    return PostgresStore(options)


def __getattr__(name: str) -> Any:
    if name == "PostgresStore":
        from engram_postgres.store import PostgresStore

        return PostgresStore
    raise AttributeError(name)


@hookimpl
def register_stores(register: Register) -> None:
    """Make the store available as ``[store] backend = "postgres"``."""
    register("postgres", open_store, options=PostgresOptions)
