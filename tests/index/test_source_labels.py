"""Vault notes are labelled ``vault`` in the index, memory files ``memory``; a store written
before that label existed (its vault notes say ``memory``) stays readable and right: stats name
every source at once, SQLite relabels in a schema migration, LanceDB and Chroma at the next
``engram index`` (without re-embedding: the vectors come from the embedding cache), and a search
limited to the vault then finds the notes. Through real subprocesses of the CLI and the real
stores. And the counts ``engram stats``, the ``memory_stats`` tool and the dashboard show are one
function's."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from engram.collections import CollectionDocument
from engram.config import load_config
from engram.dashboard.app import build_app
from engram.dashboard.data import DashboardData
from engram.memory import Memory
from engram.tools.toolbox import Toolbox
from support import write_vault

BACKENDS = ("sqlite", "lancedb", "chroma")
NOTES = {
    "deploy.md": "# Deploy\n\nRoll back a bad deploy with make rollback ENV=prod.\n",
    "cats.md": "# Cats\n\nThe office cats are fed at noon by whoever is in first.\n",
}
MEMORY = "The user prefers rebasing feature branches over merging main into them."


def engram(root: Path, *args: str) -> str:
    """Run ``engram ARGS`` in a real process in ``root``; it must succeed."""
    env = {**os.environ, "ENGRAM_USER_CONFIG": str(root / "none.toml")}
    proc = subprocess.run(
        [sys.executable, "-m", "engram", *args],
        capture_output=True,
        text=True,
        env=env,
        cwd=root,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return proc.stdout


def make_project(root: Path, backend: str) -> Path:
    """A vault of two notes and one stored memory, indexed by the CLI on ``backend``."""
    (root / "engram.toml").write_text(
        f'[store]\nbackend = "{backend}"\n\n[embedder]\nprovider = "hash"\n\n'
        '[vault]\npaths = ["notes"]\n\n[memory]\nuser_scope = false\n',
        encoding="utf-8",
    )
    write_vault(root / "notes", dict(NOTES))
    engram(root, "index")
    engram(root, "remember", MEMORY, "--type", "preference")
    return root


def labels(root: Path) -> dict[str, str]:
    """Each chunk's document and ``source`` label, and each document record's, read from the
    store through its protocol."""
    with Memory.open(load_config(start=root)) as memory:
        found = {
            f"chunk {c.document_id}": str(c.metadata.get("source"))
            for batch in memory.store.iter_chunks()
            for c in batch
        }
        for doc_id, doc in memory.store.list_documents().items():
            found[f"record {doc_id}"] = str(doc.metadata.get("source"))
    return found


def as_written_before_the_vault_label(root: Path, backend: str) -> None:
    """Turn the store into one written by the code before the ``vault`` label: every
    markdown chunk and record says ``memory``, and a SQLite file is at schema version 2."""
    with Memory.open(load_config(start=root)) as memory:
        store = memory.store
        old = [
            c.model_copy(update={"metadata": {**c.metadata, "source": "memory"}})
            for batch in store.iter_chunks()
            for c in batch
            if c.metadata.get("source") == "vault"
        ]
        assert old, "the vault notes were not labelled vault"
        store.upsert(old)
        for doc in store.list_documents().values():
            if doc.metadata.get("source") == "vault":
                meta = {**doc.metadata, "source": "memory"}
                store.put_document(doc.model_copy(update={"metadata": meta}))
    if backend == "sqlite":
        with sqlite3.connect(root / ".engram" / "index.sqlite") as conn:
            for change in ("insert", "update", "delete"):  # migration 5's
                conn.execute(f"DROP TRIGGER documents_token_{change}")
            conn.execute("DELETE FROM meta WHERE key = 'documents_token'")
            conn.execute("ALTER TABLE documents DROP COLUMN ctime_ns")  # migration 6's
            for column in ("source", "path", "size", "mtime_ns", "inode", "indexed_at"):
                conn.execute(f"ALTER TABLE documents DROP COLUMN {column}")  # migration 4's
            conn.execute("PRAGMA user_version = 2")
        conn.close()


def vault_hits(root: Path) -> list[str]:
    """Paths the ``memory_search`` tool finds when limited to the vault."""
    with Memory.open(load_config(start=root)) as memory:
        result = Toolbox(memory).call(
            "memory_search", {"query": "cats fed noon", "source": "vault", "limit": 10}
        )
    assert result.ok, result.text
    data: dict[str, Any] = result.data or {}
    return sorted({hit["path"] for hit in data["results"]})


def check_new_labels(root: Path) -> None:
    """Vault notes (chunks and records) say ``vault``, the memory file ``memory``."""
    found = labels(root)
    for name in NOTES:
        assert found[f"chunk notes/{name}"] == found[f"record notes/{name}"] == "vault"
    assert {v for k, v in found.items() if " memory/" in k} == {"memory"}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_store_from_before_the_vault_label_stays_readable_and_right(
    tmp_path: Path, backend: str
) -> None:
    root = make_project(tmp_path, backend)
    check_new_labels(root)
    assert "notes/cats.md" in vault_hits(root)
    as_written_before_the_vault_label(root, backend)

    # Read at once, before any re-index: stats tell the notes from the memories by their path.
    stats = json.loads(engram(root, "stats", "--json"))
    assert stats["documents_by_source"] == {"memories": 1, "vault notes": 2}
    hits = json.loads(engram(root, "search", "office cats noon", "--json"))["hits"]
    assert "notes/cats.md" in {h["path"] for h in hits}

    if backend == "sqlite":  # the migration relabelled the notes when the file was opened
        assert {labels(root)[f"chunk notes/{n}"] for n in NOTES} == {"vault"}

    report = json.loads(engram(root, "index", "--json"))
    check_new_labels(root)
    # Relabelling re-indexes only the notes still labelled the old way, and only once.
    assert report["changed"] == (0 if backend == "sqlite" else 2)
    again = json.loads(engram(root, "index", "--json"))
    assert again["changed"] == again["new"] == 0 and again["removed"] == 0
    assert "notes/cats.md" in vault_hits(root)
    stats = json.loads(engram(root, "stats", "--json"))
    assert stats["documents_by_source"] == {"memories": 1, "vault notes": 2}
    assert stats["chunks"] == sum(s["chunks"] for s in stats["sources"].values())


def test_cli_tool_and_dashboard_show_the_same_counts(tmp_path: Path) -> None:
    root = make_project(tmp_path, "sqlite")
    with Memory.open(load_config(start=root)) as memory:
        memory.remember("Deploys go out on Tuesdays after review.", type="decision")
        memory.collection("docs").add([CollectionDocument(id="a", text="A collection text.")])
    cli = json.loads(engram(root, "stats", "--json"))
    with Memory.open(load_config(start=root)) as memory:
        tool = Toolbox(memory).call("memory_stats", {})
        assert tool.ok and tool.data is not None, tool.text
        with TestClient(build_app(DashboardData(memory)), base_url="http://127.0.0.1:8765") as c:
            page = c.get("/api/index").json()
            listing = c.get("/api/memories").json()
    assert cli["documents_by_source"] == {"collections": 1, "memories": 2, "vault notes": 2}
    assert tool.data["documents_by_source"] == cli["documents_by_source"]
    assert {n: s["documents"] for n, s in page["sources"].items()} == cli["documents_by_source"]
    assert {n: s["chunks"] for n, s in page["sources"].items()} == {
        n: s["chunks"] for n, s in cli["sources"].items()
    }
    assert page["chunks"] == cli["chunks"] == tool.data["chunks"]
    assert page["documents"] == cli["documents"] == tool.data["documents"] == 5
    assert cli["memories_by_type"] == {"decision": 1, "preference": 1}
    assert tool.data["memories_by_type"] == listing["by_type"] == cli["memories_by_type"]
    assert tool.data["memories_by_scope"] == listing["by_scope"] == cli["memories_by_scope"]
    assert cli["keyword_only"] == tool.data["keyword_only"] == 0
    assert sum(s["pending"] for s in page["sources"].values()) == 0
