"""The session-start hook starts fast when it has nothing to do: the command lines ``hooks
install`` writes are parsed without typer; the catch-up capture is waited for only when a stat
says a transcript changed since the last round; and after a recall that found nothing, the next
start answers from a stamp of what that recall read, without pydantic, numpy, a store or a
worker, until any of it changes (a new memory, an edited config). Before any stamp, as in a new
project, the hook reads the memory folders from the config files (tomllib) and answers nothing
without a worker when they hold no memory file; a worker that failed since the last one that
worked (a config that parses but is invalid) sends the next start down the full path."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_support import wait_until
from engram.chunking import read_frontmatter
from engram.config import load_config
from engram.hosts import detached, entry, events, prompt, quiet
from engram.hosts.base import EVENTS
from engram.hosts.command import run_argv
from engram.hosts.registry import names
from engram.memories.access import AccessLog
from engram.memory import Memory

SQLITE = '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
PROBE = """
import json, sys
from engram.cli import main
code = main({argv!r})
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}), file=sys.stderr)
"""
HEAVY = {"typer", "pydantic", "pydantic_settings", "numpy", "filelock", "onnxruntime"}
HEAVY |= {"engram.config", "engram.memory", "engram.models", "engram.cli.hooks"}


class Project:
    """A project in a fixture HOME, with Claude Code's transcript folder for it."""

    def __init__(self, tmp: Path) -> None:
        self.root = tmp / "shop"
        self.root.mkdir()
        (self.root / "engram.toml").write_text(SQLITE, encoding="utf-8")
        home = tmp / "home"
        self.env = {
            k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "XDG_"))
        } | {"HOME": str(home), "XDG_DATA_HOME": str(home / "data")}
        self.transcripts = home / ".claude" / "projects" / "-shop"
        self.transcripts.mkdir(parents=True)
        self.state = self.root / ".engram"

    def payload(self, session: str = "now") -> str:
        return json.dumps(
            {
                "session_id": session,
                "transcript_path": str(self.transcripts / f"{session}.jsonl"),
                "cwd": str(self.root),
                "hook_event_name": "SessionStart",
            }
        )

    def start(self) -> tuple[int, str, str, list[str]]:
        """``engram hooks run session-start`` as Claude Code runs it; exit, out, err, modules."""
        argv = ["hooks", "run", "session-start", "--host", "claude-code", "--timeout", "55"]
        proc = subprocess.run(
            [sys.executable, "-c", PROBE.format(argv=argv)],
            input=self.payload(),
            cwd=self.root,
            env=self.env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        *lines, last = proc.stderr.strip().splitlines()
        report = json.loads(last)
        return report["code"], proc.stdout, "\n".join(lines), report["modules"]

    def settled(self) -> bool:
        """The background capture this start spawned has finished its round."""
        done = self.state / detached.DONE
        return done.exists() and not (self.state / detached.PID).exists()


@pytest.fixture
def shop(tmp_path: Path) -> Project:
    return Project(tmp_path)


def _heavy(modules: list[str]) -> list[str]:
    return [m for m in modules if m in HEAVY or m.split(".")[0] in HEAVY]


def test_an_empty_project_starts_without_pydantic_numpy_or_a_worker_first_and_after(
    shop: Project,
) -> None:
    # The first start of a new project: no stamp, no capture round yet, no memory file.
    code, out, err, modules = shop.start()
    assert (code, out, err) == (0, "", "")
    assert not _heavy(modules), "the first start loaded the heavy modules"
    stamp = shop.state / quiet.STAMP
    assert stamp.is_file()
    wait_until(shop.settled, 90, "the capture round the first start left behind")
    before = stamp.stat().st_mtime_ns, stamp.stat().st_ino
    code, out, err, modules = shop.start()
    assert (code, out, err) == (0, "", "")
    assert not _heavy(modules), "the hook loaded the heavy modules"
    # A worker would have replaced the stamp (it forgets it first, then writes it anew).
    assert (stamp.stat().st_mtime_ns, stamp.stat().st_ino) == before


def test_a_first_start_reads_the_memory_folder_where_the_project_config_moved_it(
    shop: Project,
) -> None:
    (shop.root / "engram.toml").write_text(SQLITE + '[memory]\ndir = "team/memory"\n')
    with Memory.open(load_config(start=shop.root)) as memory:
        stored = memory.remember("Deploys go out on Tuesdays after the change review.")
    assert stored.path.startswith("team/memory/")
    code, out, err, _ = shop.start()  # first start, a memory in the moved folder: the full path
    assert code == 0, err
    context = json.loads(out)["hookSpecificOutput"]["additionalContext"]
    assert "Deploys go out on Tuesdays" in context
    stamp = json.loads((shop.state / quiet.STAMP).read_text(encoding="utf-8"))
    assert "Deploys go out on Tuesdays" in stamp["text"], "the block is kept for the next start"


def test_a_first_start_looks_in_the_moved_folder_not_the_default_one(shop: Project) -> None:
    (shop.root / "engram.toml").write_text(SQLITE + '[memory]\ndir = "team/memory"\n')
    stray = shop.root / "memory" / "decision"  # no memory folder under this config
    stray.mkdir(parents=True)
    (stray / "old.md").write_text("# Deploys on Fridays\n", encoding="utf-8")
    code, out, err, modules = shop.start()
    assert (code, out, err) == (0, "", "") and not _heavy(modules)
    folders = json.loads((shop.state / quiet.STAMP).read_text(encoding="utf-8"))["folders"]
    assert str((shop.root / "team" / "memory").resolve()) in folders
    context = _recalled_after_remembering(shop, "the capture round")
    assert "Deploys go out on Tuesdays" in context and "Fridays" not in context


def test_a_config_that_parses_but_is_invalid_is_reported_once_its_capture_failed(
    shop: Project,
) -> None:
    (shop.root / "engram.toml").write_text('[store]\nbackend = "no-such-store"\n')
    # The first start answers from the empty folders without reading the config further...
    code, out, err, modules = shop.start()
    assert (code, out, err) == (0, "", "") and not _heavy(modules)
    # ...the capture it starts fails and says so in its log...
    log = shop.state / detached.LOG
    wait_until(
        lambda: (
            "capture failed" in log.read_text(encoding="utf-8")
            and not (shop.state / detached.PID).exists()
        ),
        90,
        "the failed capture",
    )
    # ...and the next start takes the full path, which says what is wrong.
    code, out, err, _ = shop.start()
    assert (code, out) == (0, "")
    assert err.startswith("engram: memory unavailable: ") and "no-such-store" in err


def test_a_memory_written_after_an_empty_start_is_in_the_next_block(shop: Project) -> None:
    assert shop.start()[:2] == (0, "")
    context = _recalled_after_remembering(shop, "the catch-up round")
    assert "Deploys go out on Tuesdays" in context


def _block(out: str) -> str:
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])


def test_a_start_with_nothing_changed_serves_the_last_block_without_a_worker(
    shop: Project,
) -> None:
    """The block is a function of the memory files and the config: when no stat moved since
    the last recall, the start gives the same block without loading engram's heavy modules,
    still marks what it showed as seen for the session, and the capture it starts counts
    the accesses."""
    assert shop.start()[:2] == (0, "")  # the first start, and its capture round
    wait_until(shop.settled, 90, "the first capture round")
    before_full_start = time.time_ns()
    context = _recalled_after_remembering(shop, "the first capture round")
    wait_until(
        lambda: (
            shop.settled() and (shop.state / detached.DONE).stat().st_mtime_ns >= before_full_start
        ),
        90,
        "the capture round after the full start",
    )
    stamp = shop.state / quiet.STAMP
    before = stamp.stat().st_mtime_ns, stamp.stat().st_ino
    code, out, err, modules = shop.start()
    assert (code, err) == (0, "") and _block(out) == context
    assert not _heavy(modules), "a start with nothing changed loaded the heavy modules"
    # A worker would have replaced the stamp (it forgets it first, then writes it anew).
    assert (stamp.stat().st_mtime_ns, stamp.stat().st_ino) == before, "a worker ran"
    seen = prompt.load_seen(shop.root, "now")
    assert any(key.endswith(".md") for key in seen), seen
    pending = shop.state / quiet.RECALLED
    wait_until(
        lambda: shop.settled() and not pending.exists(), 90, "a capture counting the accesses"
    )
    [path] = [p for p in (shop.root / "memory").rglob("*.md") if "Tuesdays" in p.read_text()]
    memory_id = str(read_frontmatter(path.read_text(encoding="utf-8")).metadata["id"])
    counts = AccessLog(shop.root / "memory").read([memory_id])
    assert counts[memory_id].count == 2, "the full start's access and the served block's"


def test_a_memory_edited_behind_the_stamps_back_is_recalled_anew(shop: Project) -> None:
    """Same size, mtime put back (``touch -r``, some sync tools): the ctime still shows the
    edit, and the next start takes the full path."""
    assert shop.start()[:2] == (0, "")  # the first start, and its capture round
    _recalled_after_remembering(shop, "the first capture round")
    wait_until(shop.settled, 90, "the capture round after the full start")
    [path] = [p for p in (shop.root / "memory").rglob("*.md") if "Tuesdays" in p.read_text()]
    before = path.stat()
    path.write_text(path.read_text().replace("Tuesdays", "Weekends"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert path.stat().st_size == before.st_size
    code, out, err, _ = shop.start()
    assert code == 0, err
    assert "Weekends" in _block(out) and "Tuesdays" not in _block(out)
    stamp = json.loads((shop.state / quiet.STAMP).read_text(encoding="utf-8"))
    assert "Weekends" in stamp["text"], "a worker recalled anew and kept the new block"


def test_a_config_edited_after_an_empty_start_is_read_again(shop: Project) -> None:
    assert shop.start()[:2] == (0, "")
    wait_until(shop.settled, 90, "the catch-up round")
    (shop.root / "engram.toml").write_text("[store\nbackend = \n", encoding="utf-8")
    code, out, err, _ = shop.start()
    assert (code, out) == (0, "")
    assert err.startswith("engram: memory unavailable: ") and "engram.toml" in err


def _at(path: Path, ns: int) -> Path:
    path.touch()
    os.utime(path, ns=(ns, ns))
    return path


def test_the_catch_up_is_pending_only_when_a_transcript_changed_since_the_last_round(
    tmp_path: Path,
) -> None:
    project, transcripts = tmp_path / "p", tmp_path / "t"
    state = detached.state_dir(project)
    state.mkdir(parents=True)
    current = transcripts / "now.jsonl"
    # A new project: no round finished yet, and no transcript of it but the session starting.
    assert not detached.pending(project, transcripts, current)  # no transcript folder yet
    assert detached.pending(project, None, current)  # the host named no folder: cannot tell
    transcripts.mkdir()
    _at(current, 3_000_000_000_000_000_000)  # the session starting now is not catch-up work
    assert not detached.pending(project, transcripts, current)
    _at(transcripts / "old.jsonl", 1_000_000_000_000_000_000)
    assert detached.pending(project, transcripts, current)  # no round yet: any earlier one is
    _at(state / detached.DONE, 2_000_000_000_000_000_000)
    assert not detached.pending(project, transcripts, current)  # captured by that round
    (state / detached.PID).write_text("1", encoding="utf-8")
    assert detached.pending(project, transcripts, current)  # a capture is running
    (state / detached.PID).unlink()
    (state / detached.AGAIN).touch()
    assert detached.pending(project, transcripts, current)  # one was asked for again
    (state / detached.AGAIN).unlink()
    _at(transcripts / "cut.jsonl", 3_000_000_000_000_000_000)
    assert detached.pending(project, transcripts, current)  # a session ended uncaptured


@given(
    event=st.sampled_from(EVENTS),
    host=st.sampled_from(names()),
    config=st.booleans(),
    timeout=st.floats(min_value=0.01, max_value=1e6),
)
def test_the_installed_command_lines_parse_without_typer(
    event: str, host: str, config: bool, timeout: float
) -> None:
    toml = Path("/somewhere/engram.toml")
    argv = run_argv(event, host, base=["engram"], config=toml if config else None)
    argv += ["--capture-timeout", repr(timeout)]
    parsed = entry.parse(argv[1:])
    assert parsed == events.RunArgs(event, host, 55.0, timeout, toml.resolve() if config else None)


@pytest.mark.parametrize(
    "argv",
    [
        ["hooks", "run", "session-start", "--help"],
        ["hooks", "run", "session-start", "--host", "cursor-x"],
        ["hooks", "run", "session-start", "--timeout", "0"],
        ["hooks", "run", "session-start", "--timeout", "soon"],
        ["hooks", "run"],
        ["hooks", "run", "session-start", "session-end"],
        ["--set", "search.limit=3", "hooks", "run", "session-start"],
        ["hooks", "install", "claude-code"],
    ],
)
def test_anything_else_is_left_to_the_typer_app(argv: list[str]) -> None:
    assert entry.parse(argv) is None


def test_an_unknown_host_still_gets_the_apps_one_line_answer(shop: Project) -> None:
    engram = str(Path(sys.executable).parent / "engram")
    proc = subprocess.run(
        [engram, "hooks", "run", "session-start", "--host", "cursor-x"],
        cwd=shop.root,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (proc.returncode, proc.stdout) == (0, "")
    [line] = proc.stderr.splitlines()
    assert line.startswith("engram: memory unavailable: ") and "claude-code, opencode" in line


def _recalled_after_remembering(shop: Project, round_name: str) -> str:
    """Once the first start's capture round settled, remember a decision and start again:
    the block that start injects."""
    wait_until(shop.settled, 90, round_name)
    with Memory.open(load_config(start=shop.root)) as memory:
        memory.remember("Deploys go out on Tuesdays after the change review.")
    code, out, err, _ = shop.start()
    assert code == 0, err
    return str(json.loads(out)["hookSpecificOutput"]["additionalContext"])
