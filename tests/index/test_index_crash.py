"""An index killed at any step, then an edit, then another index: the store ends exactly as a
clean index of the final files would (chunk ids and texts), on SQLite, LanceDB and Chroma, and
text the edit removed is not found any more.

The kill is real: ``engram index`` runs in a child process whose store writes are counted, and the
child ends with ``os._exit`` right after the chosen write (no cleanup, no ``finally``), as a
``kill -9`` would leave it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engram.config import load_config
from engram.memory import Memory
from support import write_vault

STORES = ("sqlite", "lancedb", "chroma")

CHILD = """
import os, sys
from pathlib import Path
from engram.config import load_config
from engram.memory import Memory

root, backend, kill_at = Path(sys.argv[1]), sys.argv[2], int(sys.argv[3])
memory = Memory.open(load_config({"store": {"backend": backend}, "embedder": {"provider": "hash"}},
                                 start=root))
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

V1: dict[str, str | bytes] = {
    "notes/a.md": (
        "# Alpha\n\nThe alpha service runs on port 8080.\n\n## Owners\n\nAlice owns it.\n"
    ),
    "notes/b.md": "# Beta\n\nBeta stays the same in every version.\n",
    "notes/c.md": "# Gamma\n\nGamma is removed in the second version.\n",
}
V2: dict[str, str | bytes] = {
    "notes/a.md": (
        "# Alpha\n\nThe alpha service runs on port 9090.\n\n## Zebracorn\n\n"
        "The zebracorn migration moved it.\n\n## Owners\n\nBob owns it now.\n"
    ),
}
V3: dict[str, str | bytes] = {
    "notes/a.md": (
        "# Alpha\n\nThe alpha service runs on port 7070.\n\n## Owners\n\nCarol owns it.\n"
    ),
}


def child(root: Path, backend: str, kill_at: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), backend, str(kill_at)],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def open_memory(root: Path, backend: str) -> Memory:
    data = {"store": {"backend": backend}, "embedder": {"provider": "hash"}}
    return Memory.open(load_config(data, start=root))


def contents(memory: Memory) -> list[tuple[str, str, str]]:
    return sorted((c.id, c.document_id, c.text) for b in memory.store.iter_chunks() for c in b)


def final_state(root: Path, backend: str) -> tuple[list[tuple[str, str, str]], int]:
    """The store's chunks after a normal index, and how many chunks the removed word finds."""
    with open_memory(root, backend) as memory:
        memory.index([root / "notes"])
        found = memory.store.keyword_search("zebracorn", 10)
        return contents(memory), len(found)


def aged(root: Path) -> None:
    """The notes dated an hour back: no file is racily clean (``engram.ingest.sync``), so the
    second index writes no restamp for the unchanged note and every run takes the same
    number of writes, whatever the timing."""
    then = time.time() - 3600
    for path in (root / "notes").glob("*.md"):
        os.utime(path, (then, then))


def clean_index(tmp: Path, backend: str) -> list[tuple[str, str, str]]:
    root = tmp / "clean"
    write_vault(root, {**V1, **V3})
    (root / "notes" / "c.md").unlink()
    chunks, _ = final_state(root, backend)
    return chunks


@pytest.mark.parametrize("backend", STORES)
def test_a_kill_at_any_write_then_an_edit_is_healed_by_the_next_index(
    tmp_path: Path, backend: str
) -> None:
    clean = clean_index(tmp_path, backend)
    assert clean and all("zebracorn" not in text.lower() for _, _, text in clean)

    # How many store writes indexing V2 takes, so the kill can come after each one.
    probe = tmp_path / "probe"
    write_vault(probe, V1)
    aged(probe)
    assert child(probe, backend, 0).returncode == 0
    write_vault(probe, V2)
    (probe / "notes" / "c.md").unlink()
    full = child(probe, backend, 0)
    assert full.returncode == 0, full.stderr
    steps = int(full.stdout.split()[-1])
    # The edit (upsert, drop the stale chunks, record; or one replace_document) and the removal.
    assert steps >= 2

    for kill_at in range(1, steps + 1):
        root = tmp_path / f"kill-{kill_at}"
        write_vault(root, V1)
        aged(root)
        assert child(root, backend, 0).returncode == 0
        write_vault(root, V2)
        (root / "notes" / "c.md").unlink()
        killed = child(root, backend, kill_at)
        assert killed.returncode == 137, (kill_at, killed.stderr)
        write_vault(root, V3)
        chunks, zebracorn_hits = final_state(root, backend)
        assert chunks == clean, f"killed after write {kill_at} of {steps}"
        assert zebracorn_hits == 0, f"killed after write {kill_at}: removed text still found"
        shutil.rmtree(root)
