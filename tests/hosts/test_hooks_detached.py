"""Capture through the host hooks as Claude Code runs them, under one fixture HOME with two
projects' transcripts in ``~/.claude/projects``: the session-end hook returns at once and a
detached process captures, surviving the host killing the hook; a capture never runs twice at
once; session-start catches up on what was left; each project's memory holds its own facts
only; a folder with no engram project gets no files; a long session loses nothing."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from filelock import FileLock

from agent_support import wait_until
from engram.hosts import quiet
from engram.hosts.claude_code.sessions import project_folder_name

ENGRAM = Path(sys.executable).parent / "engram"
PNPM = "I prefer pnpm over npm for every package in this project."
FLY = "We decided to deploy on Fly.io for the ops service."
YARN = "I prefer yarn over npm for every script of the ops service."
TOML = (
    '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
    '[sessions]\nagents = ["claude-code"]\n[capture]\ncooldown_seconds = 0\n'
)
DONE = "notes:"  # what the capture log says once a round finished


@dataclass
class World:
    home: Path
    env: dict[str, str]
    shop: Path
    ops: Path

    @property
    def claude(self) -> Path:
        """Claude Code's projects folder: ``$CLAUDE_CONFIG_DIR/projects``, else ``~/.claude``'s."""
        explicit = self.env.get("CLAUDE_CONFIG_DIR")
        return (Path(explicit) if explicit else self.home / ".claude") / "projects"

    def transcript(self, project: Path, session: str) -> Path:
        return self.claude / project_folder_name(project) / f"{session}.jsonl"

    def write(self, project: Path, session: str, turns: list[tuple[str, str]]) -> Path:
        """A Claude Code transcript: one JSON line per turn, as Claude Code writes them."""
        path = self.transcript(project, session)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            for number, (role, words) in enumerate(turns, 1):
                event = {
                    "sessionId": session,
                    "cwd": str(project),
                    "type": role,
                    "uuid": f"{session}-{number}",
                    "timestamp": f"2026-11-25T10:{number // 60:02d}:{number % 60:02d}.000Z",
                    "message": {"role": role, "content": words}
                    if role == "user"
                    else {
                        "id": f"m-{session}-{number}",
                        "role": role,
                        "content": [{"type": "text", "text": words}],
                    },
                }
                handle.write(json.dumps(event) + "\n")
        return path

    def hook(
        self, event: str, project: Path, session: str, *, own_group: bool = False
    ) -> subprocess.Popen[str]:
        payload = {
            "session_id": session,
            "transcript_path": str(self.transcript(project, session)),
            "cwd": str(project),
            "hook_event_name": event,
        }
        proc = subprocess.Popen(
            [str(ENGRAM), "hooks", "run", event, "--host", "claude-code", "--timeout", "55"],
            cwd=project,
            env=self.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=own_group,
        )
        assert proc.stdin is not None
        proc.stdin.write(json.dumps(payload))
        proc.stdin.close()
        return proc

    def run(self, event: str, project: Path, session: str) -> tuple[int, str, str]:
        proc = self.hook(event, project, session)
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.read(), proc.stderr.read()
        return proc.wait(timeout=120), out, err


def memories(project: Path) -> str:
    """Every memory file of the project's folder, joined."""
    folder = project / "memory"
    files = sorted(folder.rglob("*.md")) if folder.is_dir() else []
    return "\n".join(p.read_text(encoding="utf-8") for p in files)


def log(project: Path) -> str:
    path = project / ".engram" / "capture.log"
    return path.read_text(encoding="utf-8") if path.exists() else ""


@pytest.fixture
def world(tmp_path: Path) -> World:
    home = tmp_path / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "CLAUDE_", "XDG_"))}
    env |= {
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CONFIG_HOME": str(home / ".config"),
    }
    shop, ops = tmp_path / "code" / "shop", tmp_path / "code" / "ops"
    for folder in (shop, ops):
        folder.mkdir(parents=True)
        (folder / "engram.toml").write_text(TOML, encoding="utf-8")
    return World(home, env, shop, ops)


def conversation(*said: str) -> list[tuple[str, str]]:
    turns: list[tuple[str, str]] = []
    for words in said:
        turns += [
            ("user", words),
            ("assistant", "Understood, I will keep that in mind from now on."),
        ]
    return turns


def test_each_project_captures_only_its_own_sessions_and_an_unrelated_folder_gets_nothing(
    world: World, tmp_path: Path
) -> None:
    # Interleaved: both projects' sessions are written before either ends.
    world.write(world.shop, "s-shop", conversation(PNPM))
    world.write(world.ops, "s-ops", conversation(FLY))
    world.write(world.shop, "s-shop", conversation("The cart total is shown in euros."))
    world.write(world.ops, "s-ops", conversation(YARN))
    for project, session in ((world.shop, "s-shop"), (world.ops, "s-ops")):
        code, out, err = world.run("session-end", project, session)
        assert (code, out) == (0, "") and "capturing in the background" in err
        wait_until(lambda p=project: DONE in log(p), 90, f"{project.name}'s capture")  # type: ignore[misc]
    shop, ops = memories(world.shop), memories(world.ops)
    assert "pnpm over npm" in shop and "Fly.io" not in shop and "yarn" not in shop
    assert "Fly.io" in ops and "yarn over npm" in ops and "pnpm" not in ops

    unrelated = tmp_path / "elsewhere"
    unrelated.mkdir()
    world.write(unrelated, "s-else", conversation(PNPM))
    code, out, err = world.run("session-end", unrelated, "s-else")
    assert (code, out) == (0, "") and "no engram project" in err and "Traceback" not in err
    assert list(unrelated.iterdir()) == []


def test_a_preference_in_the_first_of_40_messages_is_captured_before_compaction(
    world: World,
) -> None:
    said = ["I prefer tabs over spaces in every Python file here."]
    said += [f"Now look at step {n} of the parser refactor, please." for n in range(2, 21)]
    turns = conversation(*said)
    assert len(turns) == 40
    world.write(world.shop, "s-long", turns)
    code, out, _ = world.run("pre-compact", world.shop, "s-long")
    assert (code, out) == (0, "")
    wait_until(lambda: DONE in log(world.shop), 90, "the capture")
    assert "tabs over spaces" in memories(world.shop)


def test_the_capture_survives_the_host_killing_the_hook(world: World) -> None:
    world.write(world.shop, "s-shop", conversation(PNPM))
    hook = world.hook("session-end", world.shop, "s-shop", own_group=True)
    pid_file = world.shop / ".engram" / "capture.pid"
    wait_until(lambda: pid_file.exists() or DONE in log(world.shop), 60, "the capture to start")
    os.killpg(hook.pid, signal.SIGKILL)  # the host kills the hook and its process group
    assert hook.wait(timeout=60) in (0, -signal.SIGKILL)
    wait_until(lambda: "pnpm over npm" in memories(world.shop), 90, "the detached capture")
    wait_until(lambda: not pid_file.exists(), 90, "the capture to finish")
    assert "capture failed" not in log(world.shop)


def test_one_capture_at_a_time_and_session_start_catches_up(world: World) -> None:
    world.write(world.shop, "s-shop", conversation(PNPM))
    state = world.shop / ".engram"
    state.mkdir()
    with FileLock(state / "capture.lock"):  # a capture is running (here: held by the test)
        code, _, _ = world.run("session-end", world.shop, "s-shop")
        assert code == 0
        wait_until(lambda: "already running" in log(world.shop), 60, "the second hook to yield")
        assert (state / "capture.again").exists()
        assert "pnpm" not in memories(world.shop)
    # The next session starts: it first catches up on what the cut capture left behind.
    code, _, err = world.run("session-start", world.shop, "s-next")
    assert code == 0, err
    wait_until(lambda: "pnpm over npm" in memories(world.shop), 90, "the catch-up capture")


def test_hooks_installed_for_a_project_work_there_without_an_engram_toml(
    world: World, tmp_path: Path
) -> None:
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    install = subprocess.run(
        [str(ENGRAM), "hooks", "install", "claude-code", "--scope", "local"],
        cwd=scratch,
        env=world.env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert install.returncode == 0, install.stderr
    world.write(scratch, "s-scratch", conversation(PNPM))
    code, out, err = world.run("session-end", scratch, "s-scratch")
    assert (code, out) == (0, "") and "capturing in the background" in err
    wait_until(lambda: "pnpm over npm" in memories(scratch), 90, "the capture in scratch")


def test_claude_config_dir_transcripts_are_found_through_the_hook_payload(
    world: World, tmp_path: Path
) -> None:
    world.env["CLAUDE_CONFIG_DIR"] = str(tmp_path / "claude-elsewhere")
    world.write(world.shop, "s-moved", conversation(PNPM))
    assert not (world.home / ".claude").exists()
    assert world.run("session-end", world.shop, "s-moved")[0] == 0
    wait_until(lambda: "pnpm over npm" in memories(world.shop), 90, "the capture")


def test_a_first_start_after_uncaptured_sessions_waits_for_their_capture(world: World) -> None:
    # Hooks installed after a session ran here: no capture round ever finished, no stamp, an
    # empty memory folder. The first start must not answer "nothing" from the empty folder: it
    # waits for the catch-up capture, and the block holds what that capture found.
    world.write(world.shop, "s-before", conversation(PNPM))
    assert not (world.shop / ".engram").exists()
    code, out, err = world.run("session-start", world.shop, "s-first")
    assert code == 0, err
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "pnpm over npm" in context
    stamp = json.loads((world.shop / ".engram" / quiet.STAMP).read_text(encoding="utf-8"))
    assert "pnpm over npm" in stamp["text"], "the stamp keeps the block the capture made"
