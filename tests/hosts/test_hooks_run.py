"""``engram hooks run``, run as the host runs it: a real subprocess of the installed ``engram``
on a real project (SQLite store, hash embedder). A good project gives the recall block (Claude
Code's SessionStart JSON, or plain text), also when its index was damaged (rebuilt from the
markdown, said in one warning); anything broken (unknown store, unreadable config, a store locked
by another process, an embedder that never answers) gives exit 0, one ``engram: memory
unavailable: …`` line on stderr and nothing on stdout, within the cap. Session-end returns at
once; its capture runs detached and reports to the project's capture log
(``.engram/capture.log``), where its failures land too."""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from agent_support import copy_fixtures, wait_until
from engram.config import load_config
from engram.memory import Memory

ENGRAM = Path(sys.executable).parent / "engram"
MEMORY = "Deploys go out on Tuesdays after the change review."
WARNING = "engram: memory unavailable: "
SQLITE = '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'


@dataclass
class Run:
    code: int
    out: str
    err: str
    seconds: float

    def failed_quietly(self) -> str:
        """Exit 0, stdout clean, exactly one warning line: returns the reason it gives."""
        assert self.code == 0, self.err
        assert self.out == "", f"stdout must stay clean for the host, got {self.out!r}"
        lines = self.err.splitlines()
        assert len(lines) == 1 and lines[0].startswith(WARNING), self.err
        return lines[0].removeprefix(WARNING)


def run_hook(*args: str, cwd: Path, stdin: str = "", home: Path | None = None) -> Run:
    env = dict(os.environ)
    if home is not None:
        env["HOME"] = str(home)
    start = time.monotonic()
    proc = subprocess.run(
        [str(ENGRAM), "hooks", "run", *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr, time.monotonic() - start)


def project(root: Path, toml: str = SQLITE) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "engram.toml").write_text(toml, encoding="utf-8")
    return root


def remember(root: Path, text: str = MEMORY) -> None:
    with Memory.open(load_config(start=root)) as memory:
        memory.remember(text)


@pytest.fixture
def good(tmp_path: Path) -> Path:
    root = project(tmp_path / "shop")
    remember(root)
    return root


def test_session_start_gives_claude_code_the_block_as_additional_context(
    good: Path, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    payload = {"session_id": "abc", "cwd": str(good), "hook_event_name": "SessionStart"}
    # Started from another folder: the project is the one the host's cwd names.
    run = run_hook(
        "session-start", "--host", "claude-code", cwd=elsewhere, stdin=json.dumps(payload)
    )
    assert run.code == 0, run.err
    output = json.loads(run.out)
    assert output["hookSpecificOutput"]["hookEventName"] == "SessionStart"
    context = output["hookSpecificOutput"]["additionalContext"]
    assert context.startswith("# Relevant memories (engram)") and MEMORY in context
    assert "memory/note/" in context
    assert WARNING not in run.err


def test_session_start_prints_plain_text_for_other_hosts_and_tolerates_garbage(
    good: Path,
) -> None:
    for stdin in ("", "not json {", "[1, 2]", '{"cwd": 42}'):
        run = run_hook("session-start", "--host", "opencode", cwd=good, stdin=stdin)
        assert run.code == 0, run.err
        assert run.out.startswith("# Relevant memories (engram)") and MEMORY in run.out


def test_session_start_with_no_memory_prints_nothing(tmp_path: Path) -> None:
    run = run_hook("session-start", "--host", "claude-code", cwd=project(tmp_path / "empty"))
    assert (run.code, run.out) == (0, "")
    assert WARNING not in run.err


def capture_log(root: Path) -> str:
    path = root / ".engram" / "capture.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_an_unknown_store_plugin_is_one_warning_and_exit_0(tmp_path: Path) -> None:
    root = project(tmp_path / "p", '[store]\nbackend = "no-such-store"\n')
    # As Claude Code sends it (a start told nothing waits for no catch-up capture, so a config
    # broken from the very first start is reported from the second one: see below).
    sent = json.dumps({"session_id": "s1", "cwd": str(root), "hook_event_name": "SessionStart"})
    why = run_hook("session-start", "--host", "claude-code", cwd=root, stdin=sent).failed_quietly()
    assert "no-such-store" in why
    end = run_hook("session-end", "--host", "claude-code", cwd=root)
    assert (end.code, end.out) == (0, "") and "capturing in the background" in end.err
    wait_until(lambda: "session-end: capture failed" in capture_log(root), 60, "the failure logged")
    assert "no-such-store" in capture_log(root)
    # An empty payload now takes the full path too: a worker failed here since the last one
    # that worked, so no shortcut answers for it.
    again = run_hook("session-start", "--host", "claude-code", cwd=root).failed_quietly()
    assert "no-such-store" in again


def test_a_config_that_is_not_toml_is_one_warning_and_exit_0(tmp_path: Path) -> None:
    root = project(tmp_path / "p", "[store\nbackend = \n")
    why = run_hook("session-start", "--host", "claude-code", cwd=root).failed_quietly()
    assert "engram.toml" in why


def test_a_corrupt_sqlite_index_is_rebuilt_and_the_host_gets_the_block(good: Path) -> None:
    index = good / ".engram" / "index.sqlite"
    for side in good.joinpath(".engram").glob("index.sqlite-*"):
        side.unlink()
    index.write_bytes(b"this is not a database" * 100)
    run = run_hook("session-start", "--host", "claude-code", cwd=good)
    assert run.code == 0, run.err
    context = json.loads(run.out)["hookSpecificOutput"]["additionalContext"]
    assert MEMORY in context
    assert WARNING not in run.err
    # Session start first lets the detached catch-up capture run; whichever process opens the
    # memory first moves the damaged index aside and rebuilds it, and says so once: on the
    # hook's stderr, or in the capture log the detached process writes to.
    log = good / ".engram" / "capture.log"
    wait_until(lambda: log.is_file() and "capture" in log.read_text(encoding="utf-8"), 120)
    said = run.err.splitlines() + log.read_text(encoding="utf-8").splitlines()
    [line] = [x for x in said if "damaged" in x]
    assert "warning: the index was damaged" in line and "rebuilt" in line
    [kept] = good.joinpath(".engram").glob("index.sqlite.corrupt-*")
    assert kept.read_bytes() == b"this is not a database" * 100


def test_a_store_locked_by_another_process_is_cut_at_the_timeout(good: Path) -> None:
    toml = good / "engram.toml"
    toml.write_text(SQLITE + "busy_timeout_ms = 600000\n", encoding="utf-8")
    holder = sqlite3.connect(good / ".engram" / "index.sqlite", isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode=EXCLUSIVE")
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("SELECT count(*) FROM sqlite_master").fetchall()
        # The store would wait 600 s for the lock; run_hook gives up at 120 s, so a hook that
        # returns at all was cut by its own timeout, which the message names. No wall-clock
        # bound: a loaded machine may take longer than 2 s to start the worker and kill it.
        run = run_hook("session-start", "--host", "claude-code", "--timeout", "2", cwd=good)
    finally:
        holder.close()
    assert "no answer within 2 s" in run.failed_quietly()


@pytest.fixture
def black_hole() -> Iterator[str]:
    """An HTTP endpoint that accepts connections and never answers (the network edge)."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(16)
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"


def sessions_project(root: Path, sessions: Path, embedder: str) -> Path:
    opencode, claude = copy_fixtures(sessions)
    return project(
        root,
        f'{embedder}\n[store]\nbackend = "sqlite"\n[sessions]\nenabled = true\nscope = "all"\n'
        f'dirs = {{opencode = "{opencode}", claude-code = "{claude}"}}\n',
    )


def test_an_embedder_that_never_answers_is_cut_at_the_timeout(
    tmp_path: Path, black_hole: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    embedder = f'[embedder]\nprovider = "openai"\nbase_url = "{black_hole}"\ntimeout = 600'
    root = sessions_project(tmp_path / "p", tmp_path / "agents", embedder)
    run = run_hook("session-end", "--host", "claude-code", "--capture-timeout", "2", cwd=root)
    assert (run.code, run.out) == (0, "") and "capturing in the background" in run.err
    wait_until(lambda: "no answer within 2 s" in capture_log(root), 60, "the cut logged")


def test_session_end_indexes_the_transcripts(tmp_path: Path) -> None:
    root = sessions_project(tmp_path / "p", tmp_path / "agents", '[embedder]\nprovider = "hash"')
    payload = {"session_id": "x", "cwd": str(root), "reason": "prompt_input_exit"}
    run = run_hook("session-end", "--host", "claude-code", cwd=tmp_path, stdin=json.dumps(payload))
    assert (run.code, run.out) == (0, "")
    assert WARNING not in run.err
    wait_until(lambda: "session-end: notes:" in capture_log(root), 60, "the capture logged")
    assert "captured" in capture_log(root) and "failed:" not in capture_log(root)
    with Memory.open(load_config(start=root)) as memory:
        documents = memory.store.list_documents()
    assert any(doc.startswith("sessions/claude-code/") for doc in documents)
    assert any(doc.startswith("sessions/opencode/") for doc in documents)
