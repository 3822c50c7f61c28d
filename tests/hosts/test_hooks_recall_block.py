"""What a session starts with, and "what are my preferences" questions: the session-start block
(the real hook, a subprocess) carries the live preferences, decisions and project brief of the
project and of the user, newest first, within the token budget, before anything else; the
``memory_search`` tool and ``engram search`` find preference memories for such a question
(a type filter they expose, and type-aware retrieval without it). Real SQLite store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.config import load_config
from engram.memory import Memory
from engram.text.tokens import default_tokenizer
from engram.tools.toolbox import Toolbox

ENGRAM = Path(sys.executable).parent / "engram"
PREFERENCES = (
    "I prefer pnpm over npm for every package.",
    "I prefer tabs over spaces in Python files.",
)
USER_PREFERENCE = "I like answers short, with code first."
DECISION = "We decided to deploy on Fly.io, one region."
BRIEF = "The shop is a Django storefront selling tea, with a Vue checkout."


@pytest.fixture
def shop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with a preference, a decision, a brief, a user preference and then many newer
    notes (more than recall's candidates: newest-first alone would leave the others out)."""
    home = tmp_path / "home"
    home.mkdir()
    for key, value in {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }.items():
        monkeypatch.setenv(key, value)
    monkeypatch.delenv("ENGRAM_CONFIG", raising=False)
    root = tmp_path / "shop"
    root.mkdir()
    (root / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n', encoding="utf-8"
    )
    with Memory.open(load_config(start=root)) as memory:
        memory.remember(BRIEF, type="project-brief")
        memory.remember(DECISION, type="decision")
        memory.remember(USER_PREFERENCE, type="preference", scope="user")
        for text in PREFERENCES:
            memory.remember(text, type="preference")
        for n in range(30):
            memory.remember(f"Note {n}: the build step {n} copies static assets.", type="note")
    return root


def session_start(root: Path) -> str:
    payload = {"session_id": "s", "cwd": str(root), "hook_event_name": "SessionStart"}
    proc = subprocess.run(
        [str(ENGRAM), "hooks", "run", "session-start", "--host", "claude-code"],
        cwd=root,
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    context: str = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]
    return context


def test_the_session_start_block_leads_with_preferences_decisions_and_the_brief(
    shop: Path,
) -> None:
    block = session_start(shop)
    pinned = [*reversed(PREFERENCES), USER_PREFERENCE, DECISION, BRIEF]  # newest first
    places = [block.index(text) for text in pinned]
    assert places == sorted(places), block
    first_note = min(block.index(f"Note {n}:") for n in range(30) if f"Note {n}:" in block)
    assert max(places) < first_note
    assert default_tokenizer().count(block) <= 2000


def test_a_small_budget_keeps_the_newest_pinned_memories_and_holds(shop: Path) -> None:
    toml = shop / "engram.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + "[recall]\nbudget = 70\n", encoding="utf-8")
    block = session_start(shop)
    assert default_tokenizer().count(block) <= 70
    assert PREFERENCES[1] in block and "Note" not in block


def test_memory_search_finds_preferences_for_a_preferences_question(shop: Path) -> None:
    with Memory.open(load_config(start=shop)) as memory:
        box = Toolbox(memory)
        asked = box.call("memory_search", {"query": "what are my preferences"})
        typed = box.call("memory_search", {"query": "package manager", "type": "preference"})
        schema = box.tools[0].input_schema()
    assert asked.ok and typed.ok
    assert asked.data is not None and typed.data is not None
    found = {hit["snippet"] for hit in asked.data["results"] if hit["type"] == "preference"}
    assert {*PREFERENCES, USER_PREFERENCE} <= found
    assert typed.data["results"]
    assert all(h["type"] == "preference" for h in typed.data["results"])
    assert "preferences" in json.dumps(schema["properties"]["type"])


def test_engram_search_finds_preferences_with_and_without_type(shop: Path) -> None:
    def search(*args: str) -> list[dict[str, object]]:
        proc = subprocess.run(
            [str(ENGRAM), "search", *args, "--json"],
            cwd=shop,
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
        )
        assert proc.returncode == 0, proc.stderr
        hits: list[dict[str, object]] = json.loads(proc.stdout)["hits"]
        return hits

    asked = search("list all my preferences")
    assert {*PREFERENCES, USER_PREFERENCE} <= {str(h["text"]).strip() for h in asked[:3]}
    typed = search("build", "--type", "decision")
    assert [str(h["text"]).strip() for h in typed] == [DECISION]
