"""Access counts (bumped by search and recall hits, kept beside the markdown so rebuild keeps
them) and recency as a search option."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta
from pathlib import Path

from engram.memories.access import AccessLog
from engram.memories.files import render
from engram.models import Chunk, Hit
from engram.search import apply_recency
from support import MemoryFactory, write_vault


def counts(memory_dir: Path) -> dict[str, int]:
    return {i: a.count for i, a in AccessLog(memory_dir).read().items()}


def test_search_and_recall_hits_count_as_accesses_and_rebuild_keeps_them(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    write_vault(tmp_path, {"notes/kafka.md": "# Kafka\n\nKafka consumers commit offsets.\n"})
    memory = open_memory()
    memory.index()
    kafka = memory.remember("Kafka consumer lag alerts page the on-call engineer.", type="fact")
    other = memory.remember("The office plants are watered on Mondays.", type="fact")
    memory.search("kafka consumer lag", mode="keyword")
    memory.search("kafka consumer lag alerts", mode="keyword")
    assert counts(tmp_path / "memory") == {kafka.id: 2}  # the vault note is not a memory
    listed = {m.id: m for m in memory.list_memories()}
    assert listed[kafka.id].access_count == 2 and listed[kafka.id].last_accessed_at
    assert listed[other.id].access_count == 0 and listed[other.id].last_accessed_at is None

    block = memory.recall("office plants watering")
    assert any(item.memory_id == other.id for item in block.items)
    assert counts(tmp_path / "memory")[other.id] == 1
    memory.recall()  # no query: the newest memories, each counted once
    after = counts(tmp_path / "memory")
    assert after == {kafka.id: 3, other.id: 2}

    memory.rebuild()
    assert counts(tmp_path / "memory") == after
    ignore = tmp_path / "memory" / ".engram" / ".gitignore"
    assert ignore.read_text(encoding="utf-8").strip().endswith("*")


def test_forgetting_a_memory_forgets_its_counts(tmp_path: Path, open_memory: MemoryFactory) -> None:
    memory = open_memory()
    stored = memory.remember("Backups run at 02:00 UTC.", type="fact")
    memory.search("backups run", mode="keyword")
    assert counts(tmp_path / "memory") == {stored.id: 1}
    memory.forget(stored.id)
    assert counts(tmp_path / "memory") == {}


def _hit(name: str, score: float, **meta: str) -> Hit:
    return Hit(chunk=Chunk(id=name, document_id=name, text=name, metadata=meta), score=score)


def test_recency_blends_age_into_the_score() -> None:
    now = datetime(2025, 6, 1, tzinfo=UTC)
    week_old = (now - timedelta(days=7)).isoformat()
    fresh = _hit("fresh", 0.5, created_at=now.isoformat())
    old = _hit("old", 0.6, created_at=week_old)
    edited = _hit("edited", 0.6, created_at=week_old, updated_at=now.isoformat())
    undated = _hit("undated", 0.7)
    ranked = apply_recency([old, fresh, edited, undated], 0.5, 0.1, now.timestamp())
    scores = {h.chunk.id: h.score for h in ranked}
    assert math.isclose(scores["fresh"], 0.5 * 0.5 + 0.5 * 1.0)
    assert math.isclose(scores["old"], 0.6 * 0.5 + 0.5 * math.exp(-0.7))
    assert math.isclose(scores["edited"], 0.6 * 0.5 + 0.5)  # updated_at counts, not created_at
    assert math.isclose(scores["undated"], 0.7 * 0.5)  # no date, no recency part
    assert [h.chunk.id for h in ranked] == ["edited", "fresh", "old", "undated"]
    assert apply_recency([old, fresh], 0.0, 0.1, now.timestamp()) == [old, fresh]


def test_recency_lets_a_newer_memory_rise_in_search(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    folder = tmp_path / "memory" / "note"
    folder.mkdir(parents=True)
    now = datetime.now(UTC)
    for n, (name, days) in enumerate((("old-runbook", 400), ("new-runbook", 1))):
        meta = {
            "id": f"20250101-00000{n}-00000{n}",
            "title": name,
            "type": "note",
            "created_at": (now - timedelta(days=days)).isoformat(),
        }
        body = (
            "Restart the ingest worker, then the ingest scheduler."
            if n
            else ("Restart the ingest worker, then the ingest scheduler, then the ingest queue.")
        )
        (folder / f"{name}.md").write_text(render(meta, name, body), encoding="utf-8")
    memory = open_memory()
    memory.index()
    plain = memory.search("restart the ingest worker scheduler queue", mode="keyword")
    assert plain.hits[0].chunk.document_id == "memory/note/old-runbook.md"
    recent = memory.search(
        "restart the ingest worker scheduler queue", mode="keyword", recency_weight=0.5
    )
    assert recent.hits[0].chunk.document_id == "memory/note/new-runbook.md"
