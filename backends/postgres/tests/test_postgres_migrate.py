"""``engram migrate`` between SQLite and Postgres without re-embedding: SQLite → Postgres →
SQLite gives back what was written (text, metadata, records, identity exactly; vectors as the
float32 both keep); and the CLI copies a project into a Postgres namespace, after which one line
of config switches to it and nothing is re-embedded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.cli import main
from engram.migrate import migrate
from engram.models import Chunk, Document
from engram.protocols import Store
from engram.testing.data import IDENTITY, chunk
from engram_postgres import PostgresOptions, PostgresStore
from engram_postgres.testing import fresh_namespace
from engram_sqlite import SQLiteOptions, SQLiteStore


def odd_chunks() -> list[Chunk]:
    zero = [0.0] * IDENTITY.dimension
    return [
        Chunk(id="novec", document_id="odd", text="keyword only"),
        Chunk(id="zero", document_id="odd", text="zero vector", vector=zero),
        Chunk(id="huge", document_id="odd", text="huge", vector=[3e30] * IDENTITY.dimension),
        Chunk(
            id="a/b c'd\n#1", document_id="odd/ü 🦙", text="东京 naïve", vector=[*zero[:-1], 1.0]
        ),
        chunk(900, text="typed metadata").model_copy(
            update={
                "metadata": {
                    "i": 2**53 + 1,
                    "f": 2.5,
                    "b": True,
                    "n": None,
                    "l": [1, "x", True, None],
                    "o": {"deep": [{"x": []}]},
                    "e": [],
                    "when": "2026-03-05T10:00:00+02:00",
                }
            }
        ),
    ]


def fill(store: Store) -> None:
    store.set_identity(IDENTITY)
    store.upsert([chunk(i) for i in range(40)] + odd_chunks())
    for i in range(5):
        store.put_document(
            Document(id=f"doc-{i}", hash=f"h{i}", metadata={"source": "memory", "k": [i, None]})
        )


def contents(store: Store) -> dict[str, Any]:
    chunks = sorted((c for b in store.iter_chunks(batch_size=7) for c in b), key=lambda c: c.id)
    return {
        "chunks": [c.model_dump(exclude={"vector"}) for c in chunks],
        "vectors": {c.id: c.vector for c in chunks},
        "documents": {k: d.model_dump() for k, d in store.list_documents().items()},
        "identity": store.get_identity(),
    }


def assert_same(got: dict[str, Any], expected: dict[str, Any]) -> None:
    """Equal, vectors up to float32 rounding (a re-embedded vector would differ far more)."""
    assert {k: v for k, v in got.items() if k != "vectors"} == {
        k: v for k, v in expected.items() if k != "vectors"
    }
    assert got["vectors"].keys() == expected["vectors"].keys()
    for chunk_id, vector in expected["vectors"].items():
        if vector is None:
            assert got["vectors"][chunk_id] is None
        else:
            assert got["vectors"][chunk_id] == pytest.approx(vector, rel=1e-6, abs=1e-30)


def test_sqlite_to_postgres_to_sqlite_gives_back_exactly_the_same(
    postgres_options: PostgresOptions, tmp_path: Path
) -> None:
    source = SQLiteStore(SQLiteOptions(path=tmp_path / "source.sqlite"))
    back = SQLiteStore(SQLiteOptions(path=tmp_path / "back.sqlite"))
    postgres = PostgresStore(postgres_options)
    try:
        fill(source)
        expected = contents(source)
        report = migrate(source, postgres, batch_size=9, verify_sample=45)
        assert (report.chunks, report.vectors, report.documents) == (45, 44, 5)
        assert report.vector_searches > 0 and report.keyword_searches > 0
        assert_same(contents(postgres), expected)
        migrate(postgres, back, verify_sample=45)
        assert_same(contents(back), expected)
    finally:
        source.close()
        back.close()
        postgres.close()


def test_cli_migrates_into_postgres_and_one_line_switches_to_it(
    postgres_dsn: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("ENGRAM_USER_CONFIG", str(tmp_path / "no-user-config.toml"))
    for var in ("ENGRAM_CONFIG", "ENGRAM_LOAD_PLUGINS"):
        monkeypatch.delenv(var, raising=False)
    config = tmp_path / "engram.toml"
    config.write_text(
        '[store]\nbackend = "sqlite"\n\n[embedder]\nprovider = "hash"\n\n'
        '[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    notes = tmp_path / "notes"
    notes.mkdir()
    topics = ["postgres replication", "kubernetes ingress", "stripe webhooks", "rust lifetimes"]
    for i in range(12):
        (notes / f"n{i}.md").write_text(
            f"# Note {i}\n\nAbout {topics[i % 4]} and item-{i}.\n\n## Details\n\n"
            + " ".join(f"word{(i * 31 + j) % 97}" for j in range(30)),
            encoding="utf-8",
        )
    monkeypatch.chdir(tmp_path)

    def run(*args: str) -> tuple[int, str, str]:
        code = main(list(args))
        out, err = capsys.readouterr()
        return code, out, err

    assert run("index")[0] == 0
    queries = [
        ("search", "postgres replication", "--json", "--mode", "vector"),
        ("search", "kubernetes word3 item-7", "--json", "--mode", "keyword"),
    ]
    before = [run(*q)[1] for q in queries]
    namespace = fresh_namespace("cli")
    code, out, err = run(
        "migrate", "--to", "postgres", "--to-set", f"namespace={namespace}", "--json"
    )
    assert code == 0, err
    report = json.loads(out)
    assert report["documents"] == 12 and report["chunks"] == report["vectors"] > 12
    assert 'backend = "postgres"' in err

    config.write_text(
        config.read_text(encoding="utf-8").replace(
            'backend = "sqlite"', f'backend = "postgres"\nnamespace = "{namespace}"'
        ),
        encoding="utf-8",
    )
    after = [run(*q)[1] for q in queries]

    def hits(raw: str) -> dict[tuple[str, int], float]:
        return {(h["path"], h["start_line"]): h["score"] for h in json.loads(raw)["hits"]}

    # The same vectors answer the same way (ties may come back in another order).
    assert hits(after[0]).keys() == hits(before[0]).keys()
    assert list(hits(after[0]).values()) == pytest.approx(list(hits(before[0]).values()), abs=1e-5)
    # Keyword hits: Postgres ranks with ts_rank (no IDF), SQLite with BM25: the same number of
    # hits, each a note holding a query word.
    assert len(hits(after[1])) == len(hits(before[1])) > 0
    code, out, _ = run("index")
    assert code == 0 and "0 new, 0 changed, 12 unchanged" in out, "nothing re-embedded"
    assert not (tmp_path / ".engram" / "postgres").exists()
