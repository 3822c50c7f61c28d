"""``<private>`` spans never reach storage, the embedder or a log, on every way in: stored
memories, indexed notes, both transcript formats, search and recall queries, and tool reads."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from agent_support import RecordingEmbedder, all_chunks, copy_fixtures, sessions_config
from engram.tools import Toolbox
from support import MemoryFactory, write_vault

SECRET = "hunter2-S3CRET-7f3a"
PRIVATE = f"<private>{SECRET}</private>"


def _plant(tmp_path: Path) -> tuple[Path, Path, list[Path]]:
    """Secrets in a vault note and in both agents' transcripts; returns the planted files."""
    write_vault(
        tmp_path,
        {
            "notes/ops.md": (
                f"# Ops\n\nThe vault password is {PRIVATE} and rotates monthly.\n\n"
                f"## Later\n\nSafe text.\n<PRIVATE>\nunclosed {SECRET}\nto the end\n"
            )
        },
    )
    opencode, claude = copy_fixtures(tmp_path / "agents")
    (opencode / "part" / "msg_b1" / "prt_b1_2.json").write_text(
        json.dumps({"id": "prt_b1_2", "type": "text", "text": f"my token is {PRIVATE} ok"}),
        encoding="utf-8",
    )
    (opencode / "session" / "proj_ops" / "ses_beta.json").write_text(
        json.dumps({"id": "ses_beta", "title": f"WAL {PRIVATE}", "directory": "/x"}),
        encoding="utf-8",
    )
    transcript = next(claude.glob("-home-me-infra/5d1e*.jsonl"))
    with transcript.open("a", encoding="utf-8") as f:
        for role, text in (("user", f"the key is {PRIVATE} thanks"), ("assistant", PRIVATE)):
            event = {
                "type": role,
                "uuid": f"p-{role}",
                "message": {"role": role, "id": "m9", "content": [{"type": "text", "text": text}]},
            }
            f.write(json.dumps(event) + "\n")
    planted = [tmp_path / "notes" / "ops.md", *tmp_path.joinpath("agents").rglob("*.json*")]
    return opencode, claude, planted


def test_private_spans_never_reach_storage_the_embedder_or_a_log(
    tmp_path: Path, open_memory: MemoryFactory, caplog: pytest.LogCaptureFixture
) -> None:
    opencode, claude, planted = _plant(tmp_path)
    memory = open_memory(cache={"enabled": False}, **sessions_config(opencode, claude))
    recorder = RecordingEmbedder(memory.embedder.inner)
    memory.embedder.inner = recorder
    box = Toolbox(memory)
    answers: list[str] = []
    with caplog.at_level(logging.DEBUG):
        memory.index()
        memory.index_sessions()
        memory.remember(
            f"The staging DB is at db.internal {PRIVATE} port 5432.",
            title=f"Staging {PRIVATE}",
            tags=[PRIVATE, "db"],
        )
        for name, args in (
            ("memory_store", {"content": f"api base is https://x {PRIVATE}", "tags": [PRIVATE]}),
            ("memory_search", {"query": f"staging db {PRIVATE}"}),
            ("memory_get", {"path": "notes/ops.md"}),
            ("memory_get", {"path": "notes/ops.md", "start_line": 7, "end_line": 9}),
            ("memory_get", {"path": "sessions/opencode/ses_beta"}),
            ("memory_list", {}),
        ):
            result = box.call(name, args)
            assert result.ok, result.text
            answers.append(result.text + json.dumps(result.data))
        recalled = memory.recall(f"staging vault password {PRIVATE}", budget=2000)
        answers.append(recalled.model_dump_json())

    assert recorder.seen, "nothing was embedded: the test proves nothing"
    assert any("rotates monthly" in t for t in recorder.seen)
    assert any("my token is" in t for t in recorder.seen)
    assert not [t for t in recorder.seen if SECRET in t], "a secret reached the embedder"
    stored = [c.text + json.dumps(c.metadata) for c in all_chunks(memory)]
    stored += [d.model_dump_json() for d in memory.store.list_documents().values()]
    assert not [s for s in stored if SECRET in s], "a secret reached the store"
    assert not [a for a in answers if SECRET in a], "a tool or recall answer showed a secret"
    assert SECRET not in caplog.text
    written = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p not in planted and "agents" not in p.parts
    ]
    assert any(p.suffix == ".sqlite" for p in written) and any(p.suffix == ".md" for p in written)
    leaks = [p for p in written if SECRET.encode() in p.read_bytes()]
    assert leaks == [], f"secret written to {leaks}"
