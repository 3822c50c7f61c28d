"""What ``engram migrate`` must carry from one store to another, for the migrate tests of every
backend (ours and third parties'): a store filled with the awkward cases (no vector, a zero
vector, a huge one, an id with path, quote and newline characters, typed and nested metadata),
its whole contents as comparable data, and the comparison (exact, vectors up to the float32
rounding every store keeps: a re-embedded vector would differ far more)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram.models import Chunk, Document
from engram.protocols import Store
from engram.testing.data import IDENTITY, chunk

ORDINARY_CHUNKS = 40
RECORDS = 5


def odd_chunks() -> list[Chunk]:
    """What a store must carry over besides ordinary chunks."""
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


CHUNKS = ORDINARY_CHUNKS + len(odd_chunks())
VECTORS = CHUNKS - 1  # "novec"


def fill(store: Store) -> None:
    """The identity, ``CHUNKS`` chunks (``VECTORS`` with a vector) and ``RECORDS`` records."""
    store.set_identity(IDENTITY)
    store.upsert([chunk(i) for i in range(ORDINARY_CHUNKS)] + odd_chunks())
    for i in range(RECORDS):
        store.put_document(
            Document(id=f"doc-{i}", hash=f"h{i}", metadata={"source": "memory", "k": [i, None]})
        )


def contents(store: Store) -> dict[str, Any]:
    """Everything a store holds, vectors apart (compared with ``assert_same``)."""
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


NOTES = 12
TOPICS = ("postgres replication", "kubernetes ingress", "stripe webhooks", "rust lifetimes")
# One query a mode, each answered by several of the notes ``write_sqlite_project`` writes.
QUERIES = (
    ("search", "postgres replication", "--json", "--mode", "vector"),
    ("search", "kubernetes word3 item-7", "--json", "--mode", "keyword"),
)


def write_sqlite_project(root: Path) -> Path:
    """A project under ``root`` on SQLite with the hash embedder and ``NOTES`` notes in
    ``notes/``: what the CLI migrate tests copy into another store. Returns its config file."""
    config = root / "engram.toml"
    config.write_text(
        '[store]\nbackend = "sqlite"\n\n[embedder]\nprovider = "hash"\n\n'
        '[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    notes = root / "notes"
    notes.mkdir()
    for i in range(NOTES):
        (notes / f"n{i}.md").write_text(
            f"# Note {i}\n\nAbout {TOPICS[i % len(TOPICS)]} and item-{i}.\n\n## Details\n\n"
            + " ".join(f"word{(i * 31 + j) % 97}" for j in range(30)),
            encoding="utf-8",
        )
    return config


def assert_migrates(source: Store, target: Store) -> None:
    """``fill`` an empty ``source``, ``engram migrate`` it into an empty ``target`` (every chunk
    checked), and compare the two whole: the round trip a store's own tests run."""
    from engram.stores.migrate import migrate

    fill(source)
    migrate(source, target, verify_sample=CHUNKS)
    assert_same(contents(target), contents(source))
