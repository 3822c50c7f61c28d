"""engram with the OpenAI embedder end to end: Memory, the SQLite store, the shared cache and
the usage ledger, against the wire-format fake server."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from engram import Memory, UsageLedger, load_config
from fake_apis import FakeOpenAI, embedded_inputs

OpenMemory = Callable[..., Memory]


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


@pytest.fixture
def open_memory(
    fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[OpenMemory]:
    """A Memory rooted at tmp_path whose embedder is the OpenAI one, pointed at the fake."""
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    # Only the parts under test: other plugins in the tree have no say in these results.
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-openai,engram-sqlite")
    opened: list[Memory] = []

    def factory(store: str = "sqlite", **overrides: Any) -> Memory:
        embedder = {
            "provider": "openai",
            "base_url": fake.url,
            "dimension": 64,
            "max_retries": 1,
            "retry_base_delay": 0.001,
        }
        data: dict[str, Any] = {"store": {"backend": store}, "embedder": embedder}
        data.update(overrides)
        memory = Memory.open(load_config(data, start=tmp_path))
        opened.append(memory)
        return memory

    yield factory
    for memory in opened:
        memory.embedder.inner.close()  # type: ignore[attr-defined]
        memory.close()


def chunk_texts(memory: Memory) -> set[str]:
    return {c.text for batch in memory.store.iter_chunks() for c in batch}


def test_api_down_leaves_files_pending_and_the_next_run_embeds_only_what_is_missing(
    fake: FakeOpenAI, open_memory: OpenMemory, tmp_path: Path
) -> None:
    vault = write(
        tmp_path / "notes",
        {
            "deploy.md": "# Deploy\n\nRoll back with make rollback ENV=prod.\n",
            "db.md": "# Database\n\nPromote the replica with pg_ctl promote.\n",
        },
    )
    memory = open_memory()
    first = memory.index([vault])
    assert first.new == 2 and first.pending_embeddings == 0
    embedded_before = set(embedded_inputs(fake))
    assert embedded_before == chunk_texts(memory)

    (vault / "db.md").write_text(
        "# Database\n\nPromote the replica with pg_ctl promote.\n\n## Backups\n\n"
        "Nightly pgbackrest runs at 02:00.\n",
        encoding="utf-8",
    )
    write(vault, {"cache.md": "# Cache\n\nRedis evicts with allkeys-lru.\n"})
    fake.down(503)
    seen_before = len(fake.requests)
    down = memory.index([vault])
    assert down.pending_embeddings == 2 and down.texts_embedded == 0
    assert any("keyword search only" in w and "HTTP 503" in w for w in down.warnings)
    assert fake.statuses()[seen_before:] == [503, 503]  # one request, one retry

    keyword = memory.search("allkeys-lru", mode="keyword")
    assert [h.chunk.document_id for h in keyword.hits] == ["notes/cache.md"]
    degraded = memory.search("redis eviction allkeys-lru")
    assert degraded.degraded and degraded.mode == "keyword"
    assert any("keyword results only" in w for w in degraded.warnings)
    assert degraded.hits[0].chunk.document_id == "notes/cache.md"

    fake.up()
    seen_before = len(fake.requests)
    again = memory.index([vault])
    assert again.pending_embeddings == 0 and again.unchanged == 1
    sent = [t for r in fake.requests[seen_before:] for t in r.body["input"]]
    # Only texts no run had embedded yet: the unchanged chunk of db.md came from the cache.
    assert set(sent) == chunk_texts(memory) - embedded_before
    assert len(sent) == len(set(sent))
    assert memory.search("redis eviction", mode="vector").hits

    seen_before = len(fake.requests)
    assert memory.index([vault]).unchanged == 3
    assert len(fake.requests) == seen_before


def test_the_same_vault_in_two_stores_costs_one_call(
    fake: FakeOpenAI, open_memory: OpenMemory, tmp_path: Path
) -> None:
    vault = write(
        tmp_path / "notes",
        {f"n{i}.md": f"# Note {i}\n\nTopic {i} about service number {i}.\n" for i in range(30)},
    )
    sqlite_memory = open_memory("sqlite")
    in_process = open_memory("memory")
    sqlite_memory.index([vault])
    requests_after_first = len(fake.requests)
    assert requests_after_first == 1
    report = in_process.index([vault])
    assert report.new == 30 and report.texts_embedded > 0
    assert len(fake.requests) == requests_after_first  # every vector came from the shared cache
    assert chunk_texts(in_process) == chunk_texts(sqlite_memory)

    sqlite_memory.search("service number 7")
    in_process.search("service number 7")
    assert len(fake.requests) == requests_after_first + 1  # the query, embedded once

    ledger = UsageLedger(tmp_path / ".engram" / "usage.sqlite").summary(())[0]
    assert ledger.requests == len(fake.requests) and ledger.errors == 0
