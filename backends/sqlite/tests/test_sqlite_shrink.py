"""A store kept open (a server's) outlives its files being cut short under it: SQLite's map of
the index and numpy's map of the side matrix are never read past the file's new end (that kills
the process with SIGBUS, no message); the store answers from SQLite, or says the index is
damaged, and a replaced or removed index file is refused, never read or written. Run in a child
process, so a SIGBUS is a failed test with its exit code, not a dead test run."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

SCRIPT = textwrap.dedent(
    """
    import os, sqlite3, sys
    import numpy as np
    from engram.errors import IndexDamaged, IndexMoved
    from engram.models import Chunk, IndexIdentity
    from engram_sqlite import SQLiteOptions, SQLiteStore

    path, what = sys.argv[1], sys.argv[2]
    store = SQLiteStore(SQLiteOptions(path=path))
    store.set_identity(IndexIdentity(embedder="rand", model="r8", dimension=8, chunker="c"))
    rng = np.random.default_rng(1)
    store.upsert([
        Chunk(id=f"c{i}", document_id=f"d{i % 7}", text=f"text {i}",
              vector=rng.normal(size=8).tolist())
        for i in range(3000)
    ])
    store.close()
    store = SQLiteStore(SQLiteOptions(path=path))
    query = rng.normal(size=8).tolist()
    before = [h.chunk.id for h in store.vector_search(query, 10)]  # both files mapped now
    store.keyword_search("text", 5)
    if what == "side file cut":
        side = path + "-vectors"
        os.truncate(side, 4096 + 100)
        after = [h.chunk.id for h in store.vector_search(query, 10)]
        print("same" if after == before else f"differs {before} {after}")
    elif what == "index cut":
        conn = sqlite3.connect(path)
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
        conn.close()
        os.truncate(path, os.stat(path).st_size // 3)
        try:
            store.keyword_search("text", 5)
            store.vector_search(query, 10)
            print("answered")
        except IndexDamaged as exc:
            print("damaged", exc.files[0] == __import__("pathlib").Path(path))
    else:
        os.replace(path, path + ".aside") if what == "index replaced" else os.unlink(path)
        try:
            store.upsert([Chunk(id="late", document_id="d", text="late", vector=[1.0] * 8)])
            print("written")
        except IndexMoved:
            print("refused", os.path.exists(path))
    """
)


@pytest.mark.parametrize(
    ("what", "said"),
    [
        ("side file cut", "same"),
        ("index cut", "damaged True"),
        ("index replaced", "refused False"),
        ("index removed", "refused False"),
    ],
)
def test_a_file_cut_short_replaced_or_removed_under_an_open_store(
    tmp_path: Path, what: str, said: str
) -> None:
    run = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / "index.sqlite"), what],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, (run.returncode, run.stderr)  # -7 is SIGBUS
    assert run.stdout.strip() == said, run.stderr
