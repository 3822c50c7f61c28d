"""``<private>`` spans never reach storage, the embedder or a log, on every way in: stored
memories, indexed notes, both transcript formats, search and recall queries, and tool reads.
Hypothesis plants the secret in random nestings (``<private>a <private>b</private> SECRET
</private>``), in odd case and spacing (``< PRIVATE >``), on every one of those paths."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_support import (
    RecordingEmbedder,
    all_chunks,
    copy_fixtures,
    nested_private,
    sessions_config,
)
from engram.memory import Memory
from engram.tools.toolbox import Toolbox
from support import memory_factory, write_vault


def _plant(tmp_path: Path, secret: str, private: str) -> tuple[Path, Path, list[Path]]:
    """Secrets in a vault note and in both agents' transcripts; returns the planted files."""
    write_vault(
        tmp_path,
        {
            "notes/ops.md": (
                f"# Ops\n\nThe vault password is {private} and rotates monthly.\n\n"
                f"## Later\n\nSafe text.\n<private>\nunclosed {secret}\nto the end\n"
            )
        },
    )
    opencode, claude = copy_fixtures(tmp_path / "agents")
    (opencode / "part" / "msg_b1" / "prt_b1_2.json").write_text(
        json.dumps({"id": "prt_b1_2", "type": "text", "text": f"my token is {private} ok"}),
        encoding="utf-8",
    )
    (opencode / "session" / "proj_ops" / "ses_beta.json").write_text(
        json.dumps({"id": "ses_beta", "title": f"WAL {private}", "directory": "/x"}),
        encoding="utf-8",
    )
    transcript = next(claude.glob("-home-me-infra/5d1e*.jsonl"))
    with transcript.open("a", encoding="utf-8") as f:
        for role, text in (("user", f"the key is {private} thanks"), ("assistant", private)):
            event = {
                "type": role,
                "uuid": f"p-{role}",
                "message": {"role": role, "id": "m9", "content": [{"type": "text", "text": text}]},
            }
            f.write(json.dumps(event) + "\n")
    planted = [tmp_path / "notes" / "ops.md", *tmp_path.joinpath("agents").rglob("*.json*")]
    return opencode, claude, planted


@settings(
    max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    secret=st.text(alphabet="ABCDEFGHJKMNPQRSTUVWXYZ23456789", min_size=12, max_size=20),
    depth=st.integers(0, 2),
    after_inner=st.booleans(),
    shout=st.booleans(),
)
def test_private_spans_never_reach_storage_the_embedder_or_a_log(
    tmp_path_factory: pytest.TempPathFactory,
    caplog: pytest.LogCaptureFixture,
    secret: str,
    depth: int,
    after_inner: bool,
    shout: bool,
) -> None:
    caplog.clear()
    tmp_path = tmp_path_factory.mktemp("privacy")
    private = nested_private(secret, depth, after_inner, shout)
    opencode, claude, planted = _plant(tmp_path, secret, private)
    with memory_factory(tmp_path, "sqlite") as open_memory:
        memory = open_memory(cache={"enabled": False}, **sessions_config(opencode, claude))
        _check_every_path(tmp_path, memory, planted, caplog, secret, private)


def _check_every_path(
    tmp_path: Path,
    memory: Memory,
    planted: list[Path],
    caplog: pytest.LogCaptureFixture,
    secret: str,
    private: str,
) -> None:
    recorder = RecordingEmbedder(memory.embedder.inner)
    memory.embedder.inner = recorder
    box = Toolbox(memory)
    answers: list[str] = []
    with caplog.at_level(logging.DEBUG):
        memory.index()
        memory.index_sessions()
        memory.remember(
            f"The staging DB is at db.internal {private} port 5432.",
            title=f"Staging {private}",
            tags=[private, "db"],
        )
        for name, args in (
            ("memory_store", {"content": f"api base is https://x {private}", "tags": [private]}),
            ("memory_search", {"query": f"staging db {private}"}),
            ("memory_get", {"path": "notes/ops.md"}),
            ("memory_get", {"path": "notes/ops.md", "start_line": 7, "end_line": 9}),
            ("memory_get", {"path": "sessions/opencode/ses_beta"}),
            ("memory_list", {}),
        ):
            result = box.call(name, args)
            assert result.ok, result.text
            answers.append(result.text + json.dumps(result.data))
        recalled = memory.recall(f"staging vault password {private}", budget=2000)
        answers.append(recalled.model_dump_json())

    assert recorder.seen, "nothing was embedded: the test proves nothing"
    assert any("rotates monthly" in t for t in recorder.seen)
    assert any("my token is" in t for t in recorder.seen)
    assert not [t for t in recorder.seen if secret in t], "a secret reached the embedder"
    stored = [c.text + json.dumps(c.metadata) for c in all_chunks(memory)]
    stored += [d.model_dump_json() for d in memory.store.list_documents().values()]
    assert not [s for s in stored if secret in s], "a secret reached the store"
    assert not [a for a in answers if secret in a], "a tool or recall answer showed a secret"
    assert secret not in caplog.text
    written = [
        p
        for p in tmp_path.rglob("*")
        if p.is_file() and p not in planted and "agents" not in p.parts
    ]
    assert any(p.suffix == ".sqlite" for p in written) and any(p.suffix == ".md" for p in written)
    leaks = [p for p in written if secret.encode() in p.read_bytes()]
    assert leaks == [], f"secret written to {leaks}"
