"""Connections to PostgreSQL: one checked connection for the migrations, then a pool; the
server's errors in engram's words, the DSN's password masked in every one of them.

An unreachable server fails within ``connect_timeout`` (libpq's own bound on connecting, and the
pool's bound on waiting for a connection), as one ``StoreError`` line saying what to check.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from pgvector.psycopg.vector import register_vector_info
from psycopg import Connection
from psycopg.types import TypeInfo
from psycopg_pool import ConnectionPool, PoolTimeout

from engram import StoreError
from engram_postgres.dsn import Dsn, read_dsn
from engram_postgres.options import PostgresOptions
from engram_postgres.schema import LATEST, migrate, schema_version

APPLICATION = "engram"


class Contention(StoreError):
    """The server cancelled a transaction for a deadlock or a serialization failure: it changed
    nothing, and running it again is safe (the store's writes do, a few times)."""


class Database:
    """The pool of one store, and the translation of psycopg's errors."""

    def __init__(self, options: PostgresOptions) -> None:
        self.options = options
        self.dsn: Dsn = read_dsn(options)
        self.where = self.dsn.where
        self._vector: TypeInfo | None = None
        self.server_version = ""
        self.pgvector_version = ""
        with self.errors("connecting"):
            with self._connect() as conn:
                conn.autocommit = True
                if schema_version(conn, options.pg_schema) != LATEST:
                    migrate(conn, options.pg_schema)
                self._vector = TypeInfo.fetch(conn, "vector")
                row = conn.execute(
                    "SELECT current_setting('server_version'), "
                    "(SELECT extversion FROM pg_extension WHERE extname = 'vector')"
                ).fetchone()
                if row is not None:
                    self.server_version, self.pgvector_version = str(row[0]), str(row[1])
            if self._vector is None:
                raise StoreError(f"{self.where} has no pgvector `vector` type in its search_path")
            self.pool: ConnectionPool[Connection[Any]] = ConnectionPool(
                self.dsn.conninfo,
                min_size=options.pool_min,
                max_size=options.pool_max,
                kwargs=self._kwargs(),
                configure=self._configure,
                check=ConnectionPool.check_connection,
                timeout=options.connect_timeout,
                name=f"engram-{options.pg_schema}",
                open=True,
            )

    def _kwargs(self) -> dict[str, Any]:
        return {
            "connect_timeout": max(1, round(self.options.connect_timeout)),
            "application_name": APPLICATION,
        }

    def _connect(self) -> Connection[Any]:
        return psycopg.connect(self.dsn.conninfo, **self._kwargs())

    def _configure(self, conn: Connection[Any]) -> None:
        assert self._vector is not None
        register_vector_info(conn, self._vector)

    @contextmanager
    def connection(self, action: str) -> Iterator[Connection[Any]]:
        """A pooled connection in a transaction (committed at the end of the block)."""
        with self.errors(action), self.pool.connection() as conn, conn.transaction():
            yield conn

    @contextmanager
    def errors(self, action: str) -> Iterator[None]:
        """psycopg's and the pool's errors as ``StoreError`` lines, the password masked."""
        try:
            yield
        except PoolTimeout:
            raise StoreError(
                f"cannot reach {self.where} while {action}: no connection within "
                f"{self.options.connect_timeout:g} s; check that the server is up and reachable, "
                f"then run the same command again (writes are transactions: nothing half-written "
                f"is left)"
            ) from None
        except (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure) as exc:
            first = self.dsn.mask(str(exc).strip().splitlines()[0])
            raise Contention(
                f"{self.where} cancelled {action} for another client's concurrent write "
                f"({first}); run the same command again"
            ) from None
        except psycopg.OperationalError as exc:
            raise StoreError(self.explain(exc, action)) from None
        except psycopg.Error as exc:
            detail = self.dsn.mask(str(exc).strip().splitlines()[0] if str(exc).strip() else "")
            hint = ""
            if "extension" in detail and "vector" in detail:
                hint = "; ask the database owner to run CREATE EXTENSION vector once"
            raise StoreError(
                f"{self.where} refused {action}: {type(exc).__name__}: {detail}{hint}"
            ) from None

    def explain(self, exc: BaseException, action: str) -> str:
        text = self.dsn.mask(" ".join(str(exc).split()))
        lowered = text.lower()
        if "password authentication failed" in lowered or "no password supplied" in lowered:
            return (
                f"{self.where} refused the login while {action} ({text}); check the user and "
                f"password in ${self.options.dsn_env}"
            )
        if "does not exist" in lowered and "database" in lowered:
            return f"{self.where}: {text}; create the database or fix ${self.options.dsn_env}"
        return (
            f"cannot reach {self.where} while {action} ({text}); check that the server is up "
            f"and ${self.options.dsn_env} names it, then run the same command again"
        )

    def close(self) -> None:
        pool = getattr(self, "pool", None)
        if pool is not None and not pool.closed:
            pool.close(timeout=self.options.connect_timeout)
