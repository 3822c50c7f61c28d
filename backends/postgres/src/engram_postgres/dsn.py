"""The connection string: read from the environment variable the config names, described for
messages without its password, and the password masked in any text that might quote it."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from psycopg.conninfo import conninfo_to_dict

from engram import MissingKeyError, StoreError
from engram_postgres.options import PostgresOptions

MASK = "***"


@dataclass(frozen=True)
class Dsn:
    """A DSN and what may be said about it: ``where`` names the server, never the password."""

    conninfo: str
    where: str
    password: str | None

    def mask(self, text: str) -> str:
        """``text`` with the password (if any) replaced: server messages may echo the DSN."""
        if self.password:
            text = text.replace(self.password, MASK)
        return text.replace(self.conninfo, self.where)


def read_dsn(options: PostgresOptions) -> Dsn:
    """The DSN from ``$dsn_env``; a clear line naming the variable when it is unset or bad."""
    value = os.environ.get(options.dsn_env, "").strip()
    if not value:
        raise MissingKeyError(
            f"the PostgreSQL connection string is read from ${options.dsn_env}, which is not set; "
            f"export {options.dsn_env}='postgresql://USER:PASSWORD@HOST:5432/DATABASE"
            f"?sslmode=require' (or set [store] dsn_env to the variable that holds it)"
        )
    try:
        params = conninfo_to_dict(value)
    except Exception as exc:  # psycopg.ProgrammingError: the message may quote the DSN
        detail = str(exc)
        raise StoreError(
            f"${options.dsn_env} is not a valid PostgreSQL connection string "
            f"({_scrub(detail, value)}); use postgresql://USER:PASSWORD@HOST:PORT/DATABASE"
        ) from None
    password = params.get("password")
    return Dsn(conninfo=value, where=describe(params), password=str(password) if password else None)


def describe(params: Mapping[str, object]) -> str:
    """``PostgreSQL at host:port/database (user u)``: enough to know which server, no secret."""
    host = str(params.get("host") or params.get("hostaddr") or "localhost")
    port = str(params.get("port") or "5432")
    where = f"{host}:{port}" if not host.startswith("/") else f"socket {host} port {port}"
    database = params.get("dbname")
    user = params.get("user")
    text = f"PostgreSQL at {where}"
    if database:
        text += f"/{database}"
    if user:
        text += f" (user {user})"
    return text


def _scrub(detail: str, dsn: str) -> str:
    """A parse error about ``dsn`` without the DSN itself (it may hold a password)."""
    return detail.replace(dsn, "<dsn>") if dsn else detail
