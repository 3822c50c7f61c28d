"""A real PostgreSQL for the runs that cover every installed store, when the Postgres store is
installed (``engram_postgres.testing``; the bench alone runs without it)."""

from __future__ import annotations

import importlib.util

if importlib.util.find_spec("engram_postgres") is not None:
    from engram_postgres.testing import postgres_dsn

    __all__ = ["postgres_dsn"]
