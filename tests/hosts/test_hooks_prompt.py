"""``engram hooks run prompt``: the few memories relevant to a new prompt, from the snapshot the
capture keeps (``engram.hosts.prompt_index``), within a token budget and a time budget, none the
session was already shown. Real projects (SQLite store, hash embedder), the real ``engram``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_support import wait_until
from engram.config import load_config
from engram.hosts import prompt, prompt_index
from engram.hosts.job import HookJob
from engram.memory import Memory

ENGRAM = Path(sys.executable).parent / "engram"
SQLITE = '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
DEPLOY = "Deploys go out on Tuesdays after the change review."
BILLING = "The billing service is owned by Alice; invoices go through her team."


def make_project(root: Path, *texts: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "engram.toml").write_text(SQLITE, encoding="utf-8")
    with Memory.open(load_config(start=root)) as memory:
        for text in texts:
            memory.remember(text, type="fact")
    return root


def snapshot(root: Path) -> None:
    with Memory.open(load_config(start=root)) as memory:
        prompt_index.write(root, prompt_index.build(memory.writer, job(root)))


def job(root: Path) -> HookJob:
    return HookJob("prompt", root, root)


def ask(root: Path, text: str, session: str = "s1", host: str = "claude-code") -> str:
    payload = {"session_id": session, "cwd": str(root), "prompt": text}
    proc = subprocess.run(
        [str(ENGRAM), "hooks", "run", "prompt", "--host", host],
        cwd=root,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr
    return proc.stdout


def test_the_relevant_memory_comes_once_per_session(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", DEPLOY, BILLING)
    snapshot(root)
    out = json.loads(ask(root, "Who owns billing?"))["hookSpecificOutput"]
    assert out["hookEventName"] == "UserPromptSubmit"
    assert BILLING in out["additionalContext"] and DEPLOY not in out["additionalContext"]
    assert ask(root, "Who owns billing?") == ""  # this session saw it
    assert BILLING in ask(root, "Who owns billing?", session="s2", host="opencode")
    assert ask(root, "Nothing here matches at all", session="s3") == ""


def test_a_changed_memory_folder_refreshes_the_snapshot_in_the_background(
    tmp_path: Path,
) -> None:
    """A stale snapshot still answers (a removed memory's file is never cited) and a detached
    refresh brings the new memory in for the next prompt."""
    root = make_project(tmp_path / "p", DEPLOY)
    snapshot(root)
    with Memory.open(load_config(start=root)) as memory:
        memory.remember(BILLING, type="fact")
    before = (root / ".engram" / prompt_index.SNAPSHOT).stat().st_mtime_ns
    assert BILLING not in ask(root, "Who owns billing?", session="a")
    path = root / ".engram" / prompt_index.SNAPSHOT
    wait_until(lambda: path.stat().st_mtime_ns != before, 120, "the background refresh")
    assert BILLING in ask(root, "Who owns billing?", session="b")


def test_a_snapshot_naming_a_removed_file_cites_nothing_from_it(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", BILLING)
    snapshot(root)
    for md in (root / "memory").rglob("*.md"):
        md.unlink()
    assert ask(root, "Who owns billing?") == ""


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs a FIFO to stand for a hung disk")
def test_a_snapshot_that_never_answers_does_not_hold_the_prompt(tmp_path: Path) -> None:
    """The snapshot's read blocks forever (a FIFO nobody writes, as a hung network disk): the
    hook gives up after its time budget, prints nothing and exits 0."""
    root = make_project(tmp_path / "p", BILLING)
    (root / ".engram").mkdir(exist_ok=True)
    os.mkfifo(root / ".engram" / prompt_index.SNAPSHOT)
    assert ask(root, "Who owns billing?") == ""


def test_private_spans_of_a_prompt_are_not_searched(tmp_path: Path) -> None:
    root = make_project(tmp_path / "p", BILLING)
    snapshot(root)
    assert ask(root, "<private>billing invoices Alice</private> hello there") == ""


WORDS = st.sampled_from(
    ["alpha", "beta", "gamma", "delta", "billing", "owner", "deploy", "review", "the", "of"]
)


@settings(max_examples=60, deadline=None)
@given(
    texts=st.lists(st.lists(WORDS, min_size=1, max_size=400).map(" ".join), max_size=8),
    query=st.lists(WORDS, min_size=1, max_size=6).map(" ".join),
)
def test_the_block_never_exceeds_its_budget_nor_repeats_what_was_seen(
    tmp_path_factory: pytest.TempPathFactory, texts: list[str], query: str
) -> None:
    root = tmp_path_factory.mktemp("block")
    items = []
    for number, text in enumerate(texts):
        (root / f"m{number}.md").write_text(text, encoding="utf-8")
        items.append({"id": f"id{number}", "path": f"m{number}.md", "text": text})
    snap = prompt_index.scored(items)
    hits = prompt.rank(snap, prompt_index.terms(query), {"id0"})
    assert all(h["id"] != "id0" for h in hits) and len(hits) <= prompt.LIMIT
    text, keys = prompt.block(hits, root)
    assert prompt.tokens_of(text) <= prompt.BUDGET_TOKENS
    assert bool(text) == bool(keys)


def test_the_prompt_hook_takes_the_light_path(tmp_path: Path) -> None:
    """On every prompt the CLI imports neither the runner, nor the host modules, nor
    subprocess, pydantic or a store: of its host, only the light module that shapes the output."""
    root = make_project(tmp_path / "p", BILLING)
    snapshot(root)
    script = (
        "import sys\n"
        "from engram.cli import main\n"
        "main(['hooks', 'run', 'prompt', '--host', 'claude-code'])\n"
        "heavy = ['engram.hosts.runner', 'engram.hosts.claude_code.install', 'subprocess',"
        " 'engram.hosts.claude_code.sessions', 'pydantic', 'engram.config', 'engram.memory',"
        " 'typer']\n"
        "sys.stderr.write('LOADED ' + ' '.join(m for m in heavy if m in sys.modules))\n"
    )
    payload = {"session_id": "light", "cwd": str(root), "prompt": "Who owns billing?"}
    proc = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert BILLING in json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    assert proc.stderr.strip() == "LOADED", proc.stderr
