"""Agent transcripts (OpenCode storage, Claude Code JSONL) as a second source: searchable turns
with their metadata, tool noise left out, incremental, and never stopped by a corrupt file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_support import all_chunks, chunks_of, copy_fixtures, sessions_config
from engram.filters import Eq
from engram.memory import Memory
from engram.tools.toolbox import Toolbox
from support import MemoryFactory

CLAUDE_ID = "0b6f7c3e-1111-4a5b-9c1d-aaaaaaaaaaaa"
CLAUDE_ID_2 = "5d1e2f3a-2222-4b6c-8d7e-bbbbbbbbbbbb"
NOISE = ["zebrafile", "xylophone", "quokka", "wombat", "ocelot", "narwhal", "pangolin", "Caveat"]


@pytest.fixture
def trees(tmp_path: Path) -> tuple[Path, Path]:
    return copy_fixtures(tmp_path / "agents")


@pytest.fixture
def memory(trees: tuple[Path, Path], open_memory: MemoryFactory) -> Memory:
    return open_memory(**sessions_config(*trees))


def test_opencode_turns_are_searchable_with_their_metadata(memory: Memory) -> None:
    report = memory.index_sessions()
    assert report.new == 5 and report.skipped == []
    hits = memory.search(
        "coupon discount applied twice", mode="keyword", filter=Eq(field="source", value="sessions")
    ).hits
    assert hits
    meta = hits[0].chunk.metadata
    assert hits[0].chunk.document_id == "sessions/opencode/ses_alpha"
    assert meta["session_id"] == "ses_alpha" and meta["agent"] == "opencode"
    assert meta["role"] == "assistant" and meta["turn"] == 2
    assert meta["timestamp"] == "2025-01-01T10:01:00+00:00"
    assert meta["title"] == "Fix checkout coupon bug" and meta["project"] == "/home/me/shop"
    turns = sorted(
        (c.metadata["turn"], c.metadata["role"], c.text)
        for c in chunks_of(memory, "sessions/opencode/ses_alpha")
    )
    assert [(t, r) for t, r, _ in turns] == [(1, "user"), (2, "assistant"), (3, "user")]
    assert turns[0][2] == "The checkout page crashes when the cart has a coupon code."


def test_claude_code_turns_are_searchable_with_their_metadata(memory: Memory) -> None:
    memory.index_sessions()
    doc = f"sessions/claude-code/{CLAUDE_ID}"
    turns = sorted(chunks_of(memory, doc), key=lambda c: str(c.metadata["turn"]))
    assert [(c.metadata["role"], c.text) for c in turns] == [
        ("user", "Why is the Kafka consumer lagging on the orders topic?"),
        ("assistant", "Let me check the consumer group offsets first."),
        ("assistant", "max.poll.records is too high for the orders consumer; lower it to 100."),
    ]
    first = turns[0].metadata
    assert first["timestamp"] == "2025-01-02T09:00:00+00:00" and first["session_id"] == CLAUDE_ID
    assert first["title"] == "Kafka consumer lag investigation"
    assert first["project"] == "/home/me/shop"
    hits = memory.search("grafana alert disk usage", mode="keyword").hits
    assert hits and hits[0].chunk.document_id == f"sessions/claude-code/{CLAUDE_ID_2}"


def test_tool_noise_reasoning_meta_and_side_chains_are_left_out(memory: Memory) -> None:
    memory.index_sessions()
    stored = " ".join(c.text + json.dumps(c.metadata) for c in all_chunks(memory))
    for word in NOISE:
        assert word not in stored, f"{word!r} (tool noise or a skipped message) was indexed"
    assert "/clear" not in stored


def test_corrupt_and_partial_files_are_skipped_with_warnings(memory: Memory) -> None:
    report = memory.index_sessions()
    warnings = "\n".join(report.warnings)
    assert "msg_a3.json is not valid JSON" in warnings
    assert "prt_b2_2.json is not valid JSON" in warnings
    assert f"{CLAUDE_ID}.jsonl line 10 is not valid JSON" in warnings
    assert "corrupt-session.jsonl" in warnings
    # everything readable made it in: both OpenCode sessions and both real Claude sessions
    docs = {d for d in memory.store.list_documents() if d.startswith("sessions/")}
    assert {
        "sessions/opencode/ses_alpha",
        "sessions/opencode/ses_beta",
        f"sessions/claude-code/{CLAUDE_ID}",
        f"sessions/claude-code/{CLAUDE_ID_2}",
    } <= docs
    beta = [c.text for c in chunks_of(memory, "sessions/opencode/ses_beta")]
    assert any("pg_archivecleanup" in t for t in beta)


def test_unchanged_sessions_are_skipped_and_grown_ones_reindexed(
    memory: Memory, trees: tuple[Path, Path]
) -> None:
    opencode, claude = trees
    memory.index_sessions()
    calls = memory.embedder.calls
    again = memory.index_sessions()
    assert (again.new, again.changed, again.unchanged) == (0, 0, 5)
    assert again.chunks_written == 0 and memory.embedder.calls == calls

    transcript = claude / "-home-me-infra" / f"{CLAUDE_ID_2}.jsonl"
    with transcript.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {
                    "type": "user",
                    "uuid": "v3",
                    "sessionId": CLAUDE_ID_2,
                    "timestamp": "2025-01-03T08:05:00Z",
                    "message": {"role": "user", "content": "Also page the on-call via PagerDuty."},
                }
            )
            + "\n"
        )
    (opencode / "message" / "ses_beta" / "msg_b3.json").write_text(
        json.dumps({"id": "msg_b3", "role": "user", "time": {"created": 1735812100000}}),
        encoding="utf-8",
    )
    (opencode / "part" / "msg_b3").mkdir()
    (opencode / "part" / "msg_b3" / "prt_b3_1.json").write_text(
        json.dumps({"id": "prt_b3_1", "type": "text", "text": "Schedule it nightly with cron."}),
        encoding="utf-8",
    )
    grown = memory.index_sessions()
    assert (grown.new, grown.changed, grown.unchanged) == (0, 2, 3)
    assert memory.search("pagerduty on-call", mode="keyword").hits
    assert memory.search("schedule nightly cron", mode="keyword").hits

    transcript.unlink()
    shrunk = memory.index_sessions()
    assert shrunk.removed == 1
    assert chunks_of(memory, f"sessions/claude-code/{CLAUDE_ID_2}") == []


def test_memory_get_shows_the_turns_of_a_session(memory: Memory) -> None:
    memory.index_sessions()
    box = Toolbox(memory)
    got = box.call("memory_get", {"path": "sessions/opencode/ses_alpha", "start_line": 2})
    assert got.ok and got.data is not None
    assert got.data["text"].startswith("[2] assistant (2025-01-01T10:01:00+00:00):")
    assert "applyCoupon" in got.data["text"] and "crashes" not in got.data["text"]
    assert got.data["total_lines"] == 3
    hits = box.call("memory_search", {"query": "kafka consumer lagging", "source": "sessions"})
    assert hits.ok and hits.data is not None
    assert hits.data["results"][0]["session_id"] == CLAUDE_ID
    assert hits.data["results"][0]["role"] == "user"


def test_missing_agent_folders_only_warn(open_memory: MemoryFactory, tmp_path: Path) -> None:
    memory = open_memory(**sessions_config(tmp_path / "none-oc", tmp_path / "none-cc"))
    report = memory.index_sessions()
    assert report.new == 0 and len(report.warnings) == 2
    # One warning per host, naming the setting that points at its folder (registry order).
    assert "dirs = {claude-code" in report.warnings[0] and "dirs = {opencode" in report.warnings[1]


def test_rebuild_brings_sessions_back_when_enabled(memory: Memory) -> None:
    memory.index_sessions()
    before = memory.store.count(Eq(field="source", value="sessions"))
    report = memory.rebuild()
    assert report.new >= 5
    assert memory.store.count(Eq(field="source", value="sessions")) == before > 0
