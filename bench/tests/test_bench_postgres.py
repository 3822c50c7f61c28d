"""The postgres row of the speed section, against a real PostgreSQL + pgvector (the store's
``testing`` module: ``$ENGRAM_TEST_POSTGRES_DSN`` or a private server for the session)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import uuid
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Store
from engram.registry import Registry
from engram_bench import serverspeed, synthetic
from engram_bench.report import _speed
from engram_bench.servers import servers_for
from engram_bench.speed import run_speed
from engram_bench.stores import (
    StoreSpec,
    folder_namespace,
    fresh_folder,
    release,
    select_stores,
)
from engram_bench.synthetic import identity
from engram_postgres import testing as pg_testing

postgres_dsn = pg_testing.postgres_dsn  # the session server, a fixture


@pytest.fixture(scope="module")
def registry() -> Registry:
    return build_registry(get_plugin_manager())


def _spec(registry: Registry, **options: object) -> StoreSpec:
    specs, skipped = select_stores(registry, ["postgres"], {"postgres": dict(options)})
    assert skipped == {}
    return specs[0]


def _fill(spec: StoreSpec, folder: Path, data: synthetic.Corpus) -> None:
    from engram.models import Chunk

    store = spec.build(folder)
    try:
        store.set_identity(identity(data.vectors.shape[1]))
        store.upsert(
            [
                Chunk(
                    id=synthetic.chunk_id(i),
                    document_id=synthetic.chunk_id(i),
                    text=data.texts[i],
                    vector=data.vectors[i],
                )
                for i in range(len(data))
            ]
        )
    finally:
        store.close()


def test_a_folder_keeps_its_namespace_and_an_emptied_folder_gets_a_new_one(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry)
    first = folder_namespace(tmp_path / "a")
    assert folder_namespace(tmp_path / "a") == first
    assert spec.options_for(tmp_path / "a")["namespace"] == first
    assert folder_namespace(tmp_path / "b") != first
    fresh_folder(tmp_path / "a")
    assert folder_namespace(tmp_path / "a") != first
    # Given on the command line, the namespace is the user's.
    assert _spec(registry, namespace="mine").options_for(tmp_path / "c")["namespace"] == "mine"


def test_two_folders_are_two_namespaces_on_one_server(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry)
    data = synthetic.corpus(30, dim=8)
    _fill(spec, tmp_path / "one", data)
    stores = [spec.build(tmp_path / name) for name in ("one", "two", "one")]
    try:
        assert [s.count() for s in stores] == [30, 0, 30]
    finally:
        for store in stores:
            store.close()


def test_release_empties_the_namespace_the_bench_made_up_and_keeps_a_users(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry)
    data = synthetic.corpus(30, dim=8)
    folder = tmp_path / "made-up"
    _fill(spec, folder, data)
    name = folder_namespace(folder)
    release(spec, folder)
    assert not folder.exists()
    mine = f"mine-{uuid.uuid4().hex[:8]}"
    again = _spec(registry, namespace=name).build(tmp_path / "x")
    try:
        assert again.count() == 0 and again.get_identity() is None
    finally:
        again.close()
    users = _spec(registry, namespace=mine)
    _fill(users, tmp_path / "users", data)
    release(users, tmp_path / "users")
    kept = users.build(tmp_path / "y")
    try:
        assert kept.count() == 30
    finally:
        kept.close()


def test_the_copy_floor_writes_every_row_and_drops_its_table(postgres_dsn: str) -> None:
    data = synthetic.corpus(500, dim=16)
    with psycopg.connect(postgres_dsn) as conn:
        before = conn.execute("SELECT count(*) FROM pg_tables").fetchone()
    floor = serverspeed.copy_floor(postgres_dsn, data)
    assert floor["rows"] == 500 and floor["rows_per_s"] > 0
    with psycopg.connect(postgres_dsn) as conn:
        after = conn.execute("SELECT count(*) FROM pg_tables").fetchone()
        left = conn.execute(
            "SELECT count(*) FROM pg_tables WHERE tablename LIKE 'engram_bench_copy_%'"
        ).fetchone()
    assert before == after and left == (0,)


def test_concurrent_clients_each_search_every_query_on_a_store_of_its_own(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry)
    folder = tmp_path / "clients"
    data = synthetic.corpus(200, dim=8)
    _fill(spec, folder, data)
    queries = synthetic.queries(data, 7).vectors.tolist()
    calls: dict[int, int] = {}
    lock = threading.Lock()

    def make_call(store: Store) -> Callable[[list[float]], object]:
        def call(vector: list[float]) -> object:
            hits = store.vector_search(vector, 10)
            assert len(hits) == 10
            with lock:
                calls[id(store)] = calls.get(id(store), 0) + 1
            return hits

        return call

    result = serverspeed.searches_per_second(spec, folder, make_call, queries, 4)
    assert result["clients"] == 4 and result["searches"] == 28 and result["per_s"] > 0
    assert sorted(calls.values()) == [7 + 3] * 4  # four stores, every query once after 3 warm-ups


def test_a_failing_client_fails_the_measurement(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry)
    folder = tmp_path / "failing"
    _fill(spec, folder, synthetic.corpus(20, dim=8))

    def make_call(store: Store) -> Callable[[int], object]:
        def call(item: int) -> object:
            if item == 5:
                raise RuntimeError("client broke")
            return item

        return call

    with pytest.raises(RuntimeError, match="client broke"):
        serverspeed.searches_per_second(spec, folder, make_call, list(range(8)), 4)


def test_without_a_dsn_the_run_starts_a_private_server_and_stops_it_after(
    registry: Registry, monkeypatch: pytest.MonkeyPatch, postgres_dsn: str
) -> None:
    env = f"ENGRAM_BENCH_TEST_DSN_{uuid.uuid4().hex[:8].upper()}"
    spec = _spec(registry, dsn_env=env)
    with servers_for([spec], lambda _: None) as used:
        dsn = os.environ[env]
        assert "private PostgreSQL" in used["postgres"] and dsn not in used["postgres"]
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
    assert env not in os.environ
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=5).close()
    # With the variable set, that server is used and nothing is started.
    monkeypatch.setenv(env, postgres_dsn)
    with servers_for([spec], lambda _: None) as used:
        assert os.environ[env] == postgres_dsn
        assert used == {"postgres": f"the PostgreSQL server named by ${env}"}


def test_the_speed_run_reports_the_postgres_row(
    tmp_path: Path, registry: Registry, postgres_dsn: str
) -> None:
    spec = _spec(registry, hnsw_threshold=300)
    result = run_speed(
        [spec],
        [400],
        workdir=tmp_path,
        dim=16,
        query_count=6,
        batch=100,
        cold_open=False,
        log=lambda _: None,
    )
    (run,) = result["runs"]
    (row,) = run["stores"]
    assert "error" not in row and row["count"] == 400
    server = row["server"]
    assert "error" not in server, server
    assert server["hnsw_index"] is True and server["chunks"] == 400
    assert server["copy_floor"]["rows"] == 400
    assert row["disk_bytes"] == server["table_bytes"] > 0
    for mode in ("vector", "hybrid"):
        assert [c["clients"] for c in server["concurrent"][mode]] == [1, 4]
        assert [c["searches"] for c in server["concurrent"][mode]] == [6, 24]
    ratios = row["ratios"]
    assert ratios["ingest_share_of_copy_floor"] == pytest.approx(
        row["ingest_chunks_per_s"] / server["copy_floor"]["rows_per_s"]
    )
    assert {"vector_per_s_4_clients_x_1", "hybrid_per_s_4_clients_x_1"} <= set(ratios)
    hnsw = result["hnsw_recall"]["postgres"]
    assert hnsw["chunks"] == 375 and hnsw["hnsw_threshold"] == 300
    assert hnsw["hnsw_index"] is True and hnsw["recall_at_10"] >= 0.9
    assert not any(tmp_path.iterdir())
    with psycopg.connect(postgres_dsn) as conn:  # the run's namespaces are left empty
        filled = conn.execute(
            "SELECT count(*) FROM engram.namespaces WHERE identity IS NOT NULL AND "
            "(name LIKE 'bench-speed-postgres-400-%' OR name LIKE 'bench-hnsw-postgres-375-%')"
        ).fetchone()
    assert filled == (0,)
    text = "\n".join(
        _speed({"config": {"batch_size": 100, "speed_queries": 6}, "speed": result}, {})
    )
    line = next(x for x in text.splitlines() if x.startswith("| postgres | PostgreSQL "))
    assert f"{server['copy_floor']['rows_per_s']:,.0f}" in line and "HNSW (threshold 300)" in line
    assert f"({ratios['ingest_share_of_copy_floor']:.3f})" in line
    assert f"HNSW recall (postgres): recall@10 **{hnsw['recall_at_10']:.3f}**" in text
    assert "at 375 chunks x 16 dims (threshold 300; HNSW index searched" in text


def test_the_report_header_names_the_server_and_never_a_dsn() -> None:
    from engram_bench.report import _header

    results = {
        "machine": {"cpu": "c", "cores": 2, "logical_cpus": 2, "memory_gib": 1, "platform": "p"}
        | {"python": "3.11"},
        "versions": {"libraries": {}, "plugins": {}, "sqlite_stdlib": "3"},
        "date": "d",
        "machine_slug": "m",
        "command": "engram bench",
        "duration_s": 60.0,
        "config": {"quick": False},
        "servers": {"postgres": "the PostgreSQL server named by $ENGRAM_POSTGRES_DSN"},
    }
    assert (
        "- **Server of store postgres:** the PostgreSQL server named by $ENGRAM_POSTGRES_DSN"
        in _header(results)
    )


STOPPED_BY_SIGTERM = """
import sys, time
from engram_bench.servers import private_postgres

with private_postgres("ENGRAM_BENCH_SIGTERM_DSN") as dsn:
    print(dsn, flush=True)
    while True:
        time.sleep(0.1)
"""


def test_a_run_ended_with_sigterm_stops_its_private_server() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", STOPPED_BY_SIGTERM],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        dsn = child.stdout.readline().strip()  # the server is up once the DSN is printed
        assert dsn, child.stderr.read() if child.stderr else ""
        with psycopg.connect(dsn) as conn:
            assert conn.execute("SELECT 1").fetchone() == (1,)
        child.send_signal(signal.SIGTERM)
        assert child.wait(timeout=120) == 128 + signal.SIGTERM
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    with pytest.raises(psycopg.OperationalError):
        psycopg.connect(dsn, connect_timeout=5).close()
