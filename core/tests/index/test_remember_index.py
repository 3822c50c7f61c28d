"""``remember`` hands the index what it has just written: the text (nothing is read back), the
chunker's reading of it (not cut twice) and the first window's vector (not embedded twice).
What it stores must be exactly what ``engram index`` makes of the file: a re-index right after
is a no-op, and a rebuild from the files gives the same chunks and records."""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from pathlib import Path
from typing import Any

from agent_support import RecordingEmbedder, all_chunks, chunks_of
from engram.memory import Memory
from support import MemoryFactory

RUNBOOK = "\n\n".join(
    f"## Step {i}\n\nRestart the billing worker {i} and check invoice queue {i} drains. "
    + " ".join(f"detail{i}-{j}" for j in range(120))
    for i in range(6)
)

PROXY = "The staging API team likes the {} proxy on port 8080."  # many-valued: related


def counting(memory: Memory) -> RecordingEmbedder:
    """The real hash embedder, wrapped so every text that reaches it is counted."""
    recorder = RecordingEmbedder(memory.embedder.inner)
    memory.embedder.inner = recorder
    return recorder


def chunks(memory: Memory) -> dict[str, tuple[str, dict[str, Any], list[float]]]:
    return {
        c.id: (c.text, dict(c.metadata), [float(v) for v in c.vector or []])
        for c in all_chunks(memory)
    }


def records(memory: Memory) -> dict[str, dict[str, Any]]:
    """Each record as a re-index compares it (``indexed_at`` aside: it is the time of writing)."""
    return {
        doc_id: {"hash": doc.hash, **{k: v for k, v in doc.metadata.items() if k != "indexed_at"}}
        for doc_id, doc in memory.store.list_documents().items()
    }


def test_remember_embeds_each_new_text_once(open_memory: MemoryFactory) -> None:
    memory = open_memory(cache={"enabled": False})
    seen = counting(memory)
    stored = memory.remember(RUNBOOK, title="Billing runbook", type="decision")
    texts = [c.text for c in chunks_of(memory, stored.path)]
    assert len(texts) > 2 and stored.chunks == len(texts)
    # The plan embedded the first window; the index embedded only the others.
    assert Counter(seen.seen) == Counter(texts)

    memory.remember(PROXY.format("nginx"), type="decision")
    seen.seen.clear()
    linked = memory.remember(PROXY.format("caddy"), type="decision")
    assert linked.linked_related, "the scenario needs a related link"
    # A link changes the new file's frontmatter, not its text: its vector is still reused.
    (mine,) = [c.text for c in chunks_of(memory, linked.path)]
    assert seen.seen.count(mine) == 1


def test_after_every_write_path_a_reindex_is_a_no_op_and_a_rebuild_agrees(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    memory = open_memory(cache={"enabled": False})
    seen = counting(memory)
    made = [
        memory.remember(RUNBOOK, title="Billing runbook", type="decision"),
        memory.remember(
            "The billing service stores all invoices in PostgreSQL 15 on the main cluster.",
            type="decision",
        ),
        memory.remember(  # the plan finds the same fact reworded: merged
            "The billing service stores all the invoices in PostgreSQL 15 on the main cluster.",
            type="decision",
        ),
        memory.remember("The user prefers tabs over spaces in Go code.", type="preference"),
        memory.remember("The user prefers spaces over tabs in Go code.", type="preference"),
        memory.remember(PROXY.format("nginx"), type="fact"),
        memory.remember(PROXY.format("caddy"), type="fact"),  # related: linked both ways
        memory.remember("Releases are tagged from main.", type="decision"),
        memory.remember("releases are tagged  from MAIN", type="decision"),  # the same text
    ]
    assert [m.action for m in made] == ["created"] * 2 + ["updated"] + ["created"] * 5 + ["updated"]
    assert made[4].superseded and made[6].linked_related, "every write path is exercised"

    for doc_id, record in records(memory).items():
        path = tmp_path / doc_id
        st = os.stat(path)
        assert record["hash"] == hashlib.sha256(path.read_bytes()).hexdigest(), doc_id
        assert record["stat"] == [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns], doc_id
        assert record["path"] == path.resolve().as_posix() and record["source"] == "memory"

    before_chunks, before_records, embedded = chunks(memory), records(memory), len(seen.seen)
    report = memory.index()
    assert (report.new, report.changed, report.removed) == (0, 0, 0)
    assert (report.texts_embedded, report.chunks_written, report.chunks_deleted) == (0, 0, 0)
    assert report.unchanged == len(before_records) and len(seen.seen) == embedded
    assert chunks(memory) == before_chunks
    assert records(memory) == before_records

    memory.rebuild()  # everything again, read from the files
    assert chunks(memory) == before_chunks
    # ``root`` (where ``get`` may read) is the memory folder after a write, the vault root
    # after a full index: both hold the file, and no re-index compares it.
    assert without_root(records(memory)) == without_root(before_records)


def without_root(found: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {d: {k: v for k, v in r.items() if k != "root"} for d, r in found.items()}


def test_a_memory_the_index_cannot_take_is_kept_and_the_write_says_so(
    open_memory: MemoryFactory, tmp_path: Path
) -> None:
    """A NUL byte makes the file binary to the index: the words are on disk, and the write
    warns that search will not find them instead of passing over it in silence."""
    memory = open_memory()
    stored = memory.remember("Deploy key rotated\x00 on Monday.", type="fact")
    assert "rotated\x00 on Monday" in (tmp_path / stored.path).read_text()
    assert any("written but not indexed" in w and "NUL" in w for w in stored.warnings)
