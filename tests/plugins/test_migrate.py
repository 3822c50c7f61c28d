"""``engram migrate``: a store copied into another, without re-embedding, checked, and the
source left exactly as it was (SQLite → LanceDB → SQLite, memory → SQLite, the CLI)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import pytest

from engram.cli import main
from engram.default_plugins.memory_store import MemoryStore
from engram.errors import StoreError
from engram.models import Chunk, IndexIdentity
from engram.protocols import Store
from engram.stores.migrate import migrate
from engram.testing.data import IDENTITY
from engram.testing.migration import CHUNKS, RECORDS, VECTORS, assert_same, contents, fill
from engram_lancedb import LanceDBOptions
from engram_lancedb.store import LanceDBStore
from engram_sqlite import SQLiteOptions, SQLiteStore
from support import MemoryFactory, note, write_vault

WRITES = ("upsert", "delete", "delete_documents", "delete_where", "put_document", "reset")


class ReadOnly:
    """A real store behind a guard that fails the test on any write: proof the source is only
    read."""

    def __init__(self, inner: Store) -> None:
        self.inner = inner

    def set_identity(self, identity: IndexIdentity) -> None:
        raise AssertionError("migrate wrote the source's identity")

    def __getattr__(self, name: str) -> Any:
        if name in WRITES:
            raise AssertionError(f"migrate called {name} on the source")
        return getattr(self.inner, name)


def read_only(inner: Store) -> Store:
    """``inner`` behind the guard, typed as the store it stands for."""
    return cast(Store, ReadOnly(inner))


class DropsMetadata(MemoryStore):
    """A deliberately lossy backend (as a careless third-party plugin might be)."""

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        super().upsert([c.model_copy(update={"metadata": {}}) for c in chunks])


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_sqlite_to_lancedb_and_back_is_identical_and_leaves_the_source_alone(
    tmp_path: Path,
) -> None:
    db = tmp_path / "index.sqlite"
    with SQLiteStore(SQLiteOptions(path=db)) as original:
        fill(original)
    before = digest(db)

    with SQLiteStore(SQLiteOptions(path=db)) as source:
        expected = contents(source)
        lance = LanceDBStore(LanceDBOptions(path=tmp_path / "lance"))
        report = migrate(read_only(source), lance, batch_size=7, verify_sample=10)
        assert (report.chunks, report.vectors, report.documents) == (CHUNKS, VECTORS, RECORDS)
        assert report.identity == IDENTITY and report.checked_chunks == 10
        assert report.vector_searches > 0 and report.keyword_searches > 0
        assert contents(lance) == expected
        assert contents(source) == expected

    back = SQLiteStore(SQLiteOptions(path=tmp_path / "back.sqlite"))
    try:
        migrate(read_only(lance), back, verify_sample=CHUNKS)
        assert contents(back) == expected, "vectors, metadata and records survive both ways"
    finally:
        back.close()
        lance.close()
    assert digest(db) == before, "the source file changed"


def test_memory_to_sqlite_keeps_everything_up_to_float32(tmp_path: Path) -> None:
    source = MemoryStore()
    fill(source)
    target = SQLiteStore(SQLiteOptions(path=tmp_path / "copy.sqlite"))
    try:
        report = migrate(source, target)
        assert report.chunks == source.count() == target.count()
        assert_same(contents(target), contents(source))
    finally:
        target.close()


def test_a_target_that_is_not_empty_is_refused_unless_overwrite(tmp_path: Path) -> None:
    source = MemoryStore()
    fill(source)
    target = MemoryStore()
    target.upsert([Chunk(id="stale", document_id="x", text="left over")])
    with pytest.raises(StoreError, match=r"not empty.*--overwrite"):
        migrate(source, target)
    assert [c.id for b in target.iter_chunks() for c in b] == ["stale"]
    report = migrate(source, target, overwrite=True)
    assert report.overwrote and target.count() == source.count()
    assert target.get(["stale"]) == []


def test_a_lossy_copy_is_reported_not_trusted() -> None:
    source = MemoryStore()
    fill(source)
    with pytest.raises(StoreError, match=r"has another metadata.*source is untouched"):
        migrate(source, DropsMetadata(), verify_sample=5)


def test_an_empty_store_migrates_to_an_empty_store(tmp_path: Path) -> None:
    target = LanceDBStore(LanceDBOptions(path=tmp_path / "lance"))
    try:
        report = migrate(MemoryStore(), target)
        assert (report.chunks, report.documents, report.identity) == (0, 0, None)
        assert target.get_identity() is None and target.count() == 0
    finally:
        target.close()


# -- the command line -----------------------------------------------------------------------


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project on SQLite with the hash embedder and a small indexed vault."""
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n\n[embedder]\nprovider = "hash"\n\n'
        '[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    write_vault(tmp_path / "notes", {f"n{i}.md": note(i) for i in range(12)})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_migrates_sqlite_to_lancedb_and_one_line_switches_to_it(
    project: Path, capsys: pytest.CaptureFixture[str], open_memory: MemoryFactory
) -> None:
    assert run(capsys, "index")[0] == 0
    query = ("search", "postgres replication", "--json", "--mode", "vector")
    _, before, _ = run(capsys, *query)
    code, out, err = run(
        capsys, "migrate", "--to", "lancedb", "--to-set", "path=.engram/lance", "--json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["chunks"] > 12 and report["documents"] == 12
    assert 'backend = "lancedb"' in err

    config = (project / "engram.toml").read_text(encoding="utf-8")
    (project / "engram.toml").write_text(
        config.replace('backend = "sqlite"', 'backend = "lancedb"\npath = ".engram/lance"'),
        encoding="utf-8",
    )
    _, after, _ = run(capsys, *query)

    def hits(raw: str) -> list[tuple[str, float]]:
        return [(h["path"], round(h["score"], 4)) for h in json.loads(raw)["hits"]]

    assert hits(after) == hits(before), "the same vectors answer the same way after switching"
    code, out, _ = run(capsys, "search", "postgres replication", "--json")
    postgres_notes = {f"notes/n{i}.md" for i in (0, 5, 10)}
    assert code == 0 and json.loads(out)["hits"][0]["path"] in postgres_notes
    code, out, _ = run(capsys, "index")
    assert code == 0 and "0 new, 0 changed, 12 unchanged" in out, "nothing re-embedded"


def test_cli_refuses_a_non_empty_target_and_the_same_store(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index")
    assert run(capsys, "migrate", "--to", "lancedb")[0] == 0
    code, _, err = run(capsys, "migrate", "--to", "lancedb")
    assert code == 1 and "not empty" in err and "--overwrite" in err
    assert run(capsys, "migrate", "--to", "lancedb", "--overwrite")[0] == 0
    code, _, err = run(capsys, "migrate", "--to", "sqlite")
    assert code == 1 and "same sqlite store" in err and "--to-set path=" in err
    code, _, err = run(capsys, "migrate", "--to", "lancedb", "--to-set", "nonsense")
    assert code == 1 and "--to-set expects KEY=VALUE" in err
    code, _, err = run(capsys, "migrate", "--to", "lancedb", "--to-set", "colour=blue")
    assert code == 1 and "colour" in err and "unknown setting" in err
    assert len(err.strip().splitlines()) == 1


def test_cli_migrates_between_two_sqlite_files(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index")
    code, out, err = run(
        capsys, "migrate", "--from", "sqlite", "--to", "sqlite", "--to-set", "path=copy.sqlite"
    )
    assert code == 0, err
    assert "sqlite → sqlite" in out and "12 document records" in out
    with SQLiteStore(SQLiteOptions(path=project / "copy.sqlite")) as copy:
        assert len(copy.list_documents()) == 12


def test_cli_optimize_says_when_there_is_nothing_to_do(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_STORE__BACKEND", "memory")
    code, out, _ = run(capsys, "optimize")
    assert code == 0 and "nothing to optimize" in out
    code, out, _ = run(capsys, "optimize", "--json")
    assert json.loads(out)["optimized"] is False


def test_cli_optimize_rewrites_the_sqlite_side_matrix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index")
    code, out, _ = run(capsys, "optimize", "--json")
    assert code == 0
    report = json.loads(out)["report"]
    assert report["vectors"] > 0 and report["generation"] >= 1
    assert (project / ".engram" / "index.sqlite-vectors").is_file()
