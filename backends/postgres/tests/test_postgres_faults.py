"""Faults and bad input: no DSN, a server that is down, goes away or comes back, a wrong
password (never printed), and a client killed after any write of an index (the next index
repairs it: the store equals a clean index)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from engram import Memory, MissingKeyError, StoreError, load_config
from engram.testing.data import IDENTITY, chunk
from engram_postgres import PostgresOptions
from engram_postgres.store import PostgresStore
from engram_postgres.testing import fresh_namespace, server_folder, start_private_server

PASSWORD = "S3cret-Pa55-w0rd"
WRONG = "Wr0ng-Guess-xyz"
BOUND_S = 60.0  # generous: a clear error must come, and not hang


@pytest.fixture(scope="module")
def own_server() -> Iterator[Any]:
    """A private server of this module's, which tests stop, restart and reconfigure."""
    folder = server_folder()
    server = start_private_server(folder / "data")
    try:
        yield server
    finally:
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_no_dsn_names_the_variable_and_how_to_set_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ENGRAM_TEAM_DSN", raising=False)
    with pytest.raises(MissingKeyError) as err:
        PostgresStore(PostgresOptions(dsn_env="ENGRAM_TEAM_DSN"))
    message = str(err.value)
    assert "$ENGRAM_TEAM_DSN" in message and "export ENGRAM_TEAM_DSN=" in message
    assert "\n" not in message


def test_a_server_that_is_not_there_is_one_clear_line_in_bounded_time(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ENGRAM_DOWN_DSN", f"postgresql://u:{PASSWORD}@127.0.0.1:{free_port()}/db")
    started = time.monotonic()
    with pytest.raises(StoreError) as err:
        PostgresStore(PostgresOptions(dsn_env="ENGRAM_DOWN_DSN", connect_timeout=2))
    assert time.monotonic() - started < BOUND_S
    message = str(err.value)
    assert "cannot reach PostgreSQL at 127.0.0.1:" in message and "\n" not in message
    assert PASSWORD not in message


def test_a_bad_dsn_is_refused_without_quoting_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ENGRAM_BAD_DSN", f"postgresql://u:{PASSWORD}@host:notaport/db x=")
    with pytest.raises(StoreError) as err:
        PostgresStore(PostgresOptions(dsn_env="ENGRAM_BAD_DSN", connect_timeout=2))
    assert PASSWORD not in str(err.value) and "ENGRAM_BAD_DSN" in str(err.value)


def dsn_for(server: Any, **changes: str) -> str:
    params = conninfo_to_dict(server.get_uri())
    params.update(changes)
    return make_conninfo("", **params)


def test_a_wrong_password_is_a_clear_line_that_never_shows_it(
    own_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    admin = own_server.get_uri()
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS engram_pw")
        conn.execute(
            psycopg.sql.SQL("CREATE ROLE engram_pw LOGIN SUPERUSER PASSWORD {}").format(
                psycopg.sql.Literal(PASSWORD)
            )
        )
        hba = Path(str(conn.execute("SHOW hba_file").fetchone()[0]))  # type: ignore[index]
        rules = hba.read_text()
        if "engram_pw" not in rules:
            hba.write_text(
                "local all engram_pw scram-sha-256\nhost all engram_pw all scram-sha-256\n" + rules
            )
        conn.execute("SELECT pg_reload_conf()")
    monkeypatch.setenv("ENGRAM_PW_DSN", dsn_for(own_server, user="engram_pw", password=PASSWORD))
    monkeypatch.setenv("ENGRAM_WRONG_DSN", dsn_for(own_server, user="engram_pw", password=WRONG))
    deadline = time.monotonic() + BOUND_S
    while True:  # the reload is asynchronous: wait until the rule is in force
        try:
            with psycopg.connect(os.environ["ENGRAM_WRONG_DSN"]):
                pass
        except psycopg.OperationalError:
            break
        assert time.monotonic() < deadline, "pg_hba.conf reload never took effect"
        time.sleep(0.1)
    with pytest.raises(StoreError) as err:
        PostgresStore(PostgresOptions(dsn_env="ENGRAM_WRONG_DSN", connect_timeout=5))
    message = str(err.value)
    assert "password authentication failed" in message
    assert "$ENGRAM_WRONG_DSN" in message and "engram_pw" in message
    assert WRONG not in message and PASSWORD not in message and "\n" not in message
    store = PostgresStore(PostgresOptions(dsn_env="ENGRAM_PW_DSN", namespace=fresh_namespace()))
    try:
        store.set_identity(IDENTITY)
        assert store.count() == 0
        assert PASSWORD not in repr(store.diagnostics())
    finally:
        store.close()


def test_a_server_that_goes_away_is_a_clear_error_and_coming_back_heals(
    own_server: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_OWN_DSN", own_server.get_uri())
    options = PostgresOptions(
        dsn_env="ENGRAM_OWN_DSN", namespace=fresh_namespace(), connect_timeout=2
    )
    store = PostgresStore(options)
    try:
        store.set_identity(IDENTITY)
        store.upsert([chunk(i) for i in range(5)])
        own_server.stop()
        started = time.monotonic()
        with pytest.raises(StoreError) as err:
            store.upsert([chunk(i) for i in range(5, 10)])
        assert time.monotonic() - started < BOUND_S
        assert "cannot reach" in str(err.value) and "\n" not in str(err.value)
        with pytest.raises(StoreError):
            store.count()
        own_server.ensure_postgres_running()
        deadline = time.monotonic() + BOUND_S
        while True:
            try:
                assert store.count() == 5  # the failed write left nothing behind
                break
            except StoreError:
                assert time.monotonic() < deadline, "the pool never reconnected"
                time.sleep(0.2)
        store.upsert([chunk(i) for i in range(5, 10)])
        assert store.count() == 10
    finally:
        store.close()


CHILD = """
import os, sys
from pathlib import Path
from engram.config import load_config
from engram.memory import Memory

root, namespace, kill_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
config = {"store": {"backend": "postgres", "namespace": namespace},
          "embedder": {"provider": "hash"}}
memory = Memory.open(load_config(config, start=root))
cls = type(memory.store)
calls = 0
for name in ("upsert", "delete", "delete_documents", "prune_document", "put_document",
             "replace_document"):
    original = getattr(cls, name, None)
    if original is None:
        continue
    def counted(self, *args, _original=original, **kwargs):
        global calls
        result = _original(self, *args, **kwargs)
        calls += 1
        if calls == kill_at:
            os._exit(137)
        return result
    setattr(cls, name, counted)
memory.index([root / "notes"])
memory.close()
print(calls)
"""

V1 = {
    "a.md": "# Alpha\n\nThe alpha service runs on port 8080.\n\n## Owners\n\nAlice owns it.\n",
    "b.md": "# Beta\n\nBeta stays the same in every version.\n",
    "c.md": "# Gamma\n\nGamma is removed in the second version.\n",
}
V2 = {
    "a.md": (
        "# Alpha\n\nThe alpha service runs on port 9090.\n\n## Zebracorn\n\n"
        "The zebracorn migration moved it.\n\n## Owners\n\nBob owns it now.\n"
    ),
}
V3 = {"a.md": "# Alpha\n\nThe alpha service runs on port 7070.\n\n## Owners\n\nCarol owns it.\n"}


def write_notes(root: Path, files: dict[str, str], remove: tuple[str, ...] = ()) -> None:
    notes = root / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (notes / name).write_text(text, encoding="utf-8")
    for name in remove:
        (notes / name).unlink(missing_ok=True)
    then = time.time() - 3600  # no racily clean file: every run takes the same writes
    for path in notes.glob("*.md"):
        os.utime(path, (then, then))


def child(root: Path, namespace: str, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), namespace, str(kill_at)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def final_state(root: Path, namespace: str) -> tuple[list[tuple[str, str, str]], int]:
    config = {
        "store": {"backend": "postgres", "namespace": namespace},
        "embedder": {"provider": "hash"},
    }
    with Memory.open(load_config(config, start=root)) as memory:
        memory.index([root / "notes"])
        found = memory.store.keyword_search("zebracorn", 10)
        chunks = sorted(
            (c.id, c.document_id, c.text) for b in memory.store.iter_chunks() for c in b
        )
        return chunks, len(found)


def test_a_kill_after_any_write_then_an_edit_is_healed_by_the_next_index(
    tmp_path: Path, postgres_dsn: str
) -> None:
    clean_root = tmp_path / "clean"
    write_notes(clean_root, {**V1, **V3}, remove=("c.md",))
    clean, _ = final_state(clean_root, fresh_namespace("clean"))
    assert clean

    probe, probe_ns = tmp_path / "probe", fresh_namespace("probe")
    write_notes(probe, V1)
    assert child(probe, probe_ns, 0).returncode == 0
    write_notes(probe, V2, remove=("c.md",))
    full = child(probe, probe_ns, 0)
    assert full.returncode == 0, full.stderr
    steps = int(full.stdout.split()[-1])
    assert steps >= 2

    for kill_at in range(1, steps + 1):
        root, namespace = tmp_path / f"kill-{kill_at}", fresh_namespace(f"kill{kill_at}")
        write_notes(root, V1)
        assert child(root, namespace, 0).returncode == 0
        write_notes(root, V2, remove=("c.md",))
        killed = child(root, namespace, kill_at)
        assert killed.returncode == 137, (kill_at, killed.stderr)
        write_notes(root, V3)
        chunks, zebracorn = final_state(root, namespace)
        # Chunk ids are the same for the same files in another folder; document ids are paths.
        assert [(i, t) for i, _, t in chunks] == [(i, t) for i, _, t in clean], kill_at
        assert zebracorn == 0, f"killed after write {kill_at}: removed text still found"
