"""A write killed at any point (kill -9, through the real CLI in a fresh process) or four
writers at once never lose a stored text nor leave two live heads of one fact: the newer
memory's ``supersedes`` is the truth, and ``engram index`` / ``engram rebuild`` repair the older
file from it; the next write finishes an interrupted one before it plans (so it never supersedes
what a newer memory, written but not indexed, already did); a fork left by an older engram is
made a line again; the per-folder write lock keeps concurrent writers from forking a chain."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.chunking import read_frontmatter
from engram.memories.files import memory_files, wording_of
from engram.memories.lifecycle.crash import CRASH_ENV
from engram.memories.lifecycle.pending import mark_path
from engram.memories.lifecycle.revisions import revisions_of
from support import cli_json

OLD = "The API listens on port 8001."
NEW = "The API listens on port 8002."
THIRD = "The API listens on port 8003."
# Every named point of a supersede, in the order the write reaches them.
POINTS = ["after-plan", "after-new-file", "after-index-new", "after-mark-old", "after-index-old"]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def ok(capsys: pytest.CaptureFixture[str]) -> Callable[..., Any]:
    """The real CLI in this process (``engram ARGS --json``, which must succeed), for the
    steps around the one that is killed; the killed write and the repairing index each run
    in a fresh process."""
    return lambda *args: cli_json(capsys, *args)


def engram(project: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """``engram ARGS`` in a fresh process, the way a shell (or a crashing agent) runs it."""
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=project,
        check=False,
        timeout=300,
    )


def fresh(project: Path, *args: str) -> None:
    done = engram(project, *args)
    assert done.returncode == 0, done.stderr


def on_disk(project: Path) -> list[dict[str, Any]]:
    """Every memory file: its frontmatter, current wording and earlier wordings."""
    out = []
    for path in memory_files(project / "memory"):
        fm = read_frontmatter(path.read_text(encoding="utf-8"))
        out.append(
            {
                **fm.metadata,
                "wording": wording_of(dict(fm.metadata), fm.body),
                "earlier": [r.wording for r in revisions_of(path)],
            }
        )
    return out


def all_wordings(project: Path) -> set[str]:
    return {w for m in on_disk(project) for w in [m["wording"], *m["earlier"]]}


def live(project: Path) -> list[dict[str, Any]]:
    return [m for m in on_disk(project) if m.get("status") is None]


def assert_no_fork(project: Path) -> None:
    named = Counter(s for m in on_disk(project) for s in m.get("supersedes") or [])
    assert all(n == 1 for n in named.values()), f"a memory superseded twice: {named}"


def searched(ok: Callable[..., Any], query: str) -> set[str]:
    found = ok("search", query, "--mode", "keyword")
    return {h["text"].strip() for h in found["hits"]}


@pytest.mark.parametrize("point", POINTS)
def test_a_supersede_killed_at_any_point_heals_on_the_next_index(
    project: Path, ok: Callable[..., Any], point: str
) -> None:
    first = ok("remember", OLD, "--type", "project-config")
    crashed = engram(project, "remember", NEW, "--type", "project-config", **{CRASH_ENV: point})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert OLD in all_wordings(project)  # nothing stored is lost, whenever the kill came
    fresh(project, "index")  # repairs from the newer memory's supersedes (takes the lock)
    heads = live(project)
    assert len(heads) == 1, heads
    assert_no_fork(project)
    head = heads[0]
    if point == "after-plan":  # killed before anything was written: the old fact stands
        assert head["id"] == first["id"] and all_wordings(project) == {OLD}
    else:  # the new memory was on disk: it is the head, the old one superseded by it
        assert head["wording"] == NEW and head["supersedes"] == [first["id"]]
        old = next(m for m in on_disk(project) if m["id"] == first["id"])
        assert old["status"] == "superseded" and old["superseded_by"] == head["id"]
        assert all_wordings(project) == {OLD, NEW}
    assert searched(ok, "API listens port") == {head["wording"]}
    listed = ok("list")
    assert [m["id"] for m in listed] == [head["id"]]
    ok("rebuild")
    assert searched(ok, "API listens port") == {head["wording"]}
    history = ok("history", first["id"])
    assert {e["wording"] for e in history["entries"]} == all_wordings(project)


def test_four_contradicting_writers_at_once_leave_one_live_head_and_no_fork(
    project: Path, ok: Callable[..., Any]
) -> None:
    ok("index")  # the store exists before the race (its creation is not the test)
    texts = [f"The API listens on port {8001 + i}." for i in range(4)]
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "engram", "remember", text, "--type", "project-config"],
            cwd=project,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for text in texts
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
    assert all_wordings(project) >= set(texts)  # nothing lost
    assert_no_fork(project)
    fresh(project, "index")
    heads = live(project)
    assert len(heads) == 1, heads
    assert_no_fork(project)
    assert searched(ok, "API listens port") == {heads[0]["wording"]}


@pytest.mark.parametrize("point", ["restore-after-superseder", "restore-after-file"])
def test_a_restore_killed_at_any_point_leaves_one_consistent_state(
    project: Path, ok: Callable[..., Any], point: str
) -> None:
    old = ok("remember", OLD, "--type", "project-config")
    new = ok("remember", NEW, "--type", "project-config")
    assert new["superseded"] == [old["id"]]
    crashed = engram(project, "restore", old["id"], **{CRASH_ENV: point})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    fresh(project, "index")
    assert all_wordings(project) == {OLD, NEW}
    assert_no_fork(project)
    memories = {m["id"]: m for m in on_disk(project)}
    # The superseder let go first, so the memory is never superseded again by the repair:
    # it is restored (after the file), or still retired with the two linked (before it).
    assert "supersedes" not in memories[new["id"]]
    assert memories[new["id"]]["conflicts_with"] == [old["id"]]
    assert memories[old["id"]]["conflicts_with"] == [new["id"]]
    heads = {m["id"] for m in live(project)}
    assert heads == ({new["id"], old["id"]} if point == "restore-after-file" else {new["id"]})
    if point == "restore-after-superseder":
        ok("restore", old["id"])  # running it again finishes the job
    assert {m["id"] for m in live(project)} == {new["id"], old["id"]}


def assert_one_line(project: Path, head_wording: str) -> None:
    """One live head (with ``head_wording``), no memory superseded twice, and every superseded
    memory's ``superseded_by`` the one memory naming it."""
    heads = live(project)
    assert [m["wording"] for m in heads] == [head_wording], heads
    assert_no_fork(project)
    memories = on_disk(project)
    naming = {old: m["id"] for m in memories for old in m.get("supersedes") or []}
    for m in memories:
        if m["id"] != heads[0]["id"]:
            assert m["status"] == "superseded" and m["superseded_by"] == naming[m["id"]], m


@pytest.mark.parametrize("point", POINTS)
def test_the_next_write_finishes_a_write_killed_at_any_point_before_it_plans(
    project: Path, ok: Callable[..., Any], point: str
) -> None:
    ok("remember", OLD, "--type", "project-config")
    crashed = engram(project, "remember", NEW, "--type", "project-config", **{CRASH_ENV: point})
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    assert mark_path(project / "memory").exists()  # the unfinished write is on record
    third = ok("remember", THIRD, "--type", "project-config")  # no `engram index` between
    assert not mark_path(project / "memory").exists()
    assert_one_line(project, THIRD)
    # It superseded the head the files show, not the memory the newer one already did.
    heads = {m["wording"]: m for m in on_disk(project)}
    before = OLD if point == "after-plan" else NEW
    assert third["superseded"] == [heads[before]["id"]]
    assert all_wordings(project) == ({OLD, THIRD} if point == "after-plan" else {OLD, NEW, THIRD})
    assert searched(ok, "API listens port") == {THIRD}
    fresh(project, "index")
    assert_one_line(project, THIRD)
    ok("rebuild")
    assert_one_line(project, THIRD)
    assert searched(ok, "API listens port") == {THIRD}


def test_index_makes_a_fork_left_by_an_older_engram_one_line_the_newer_head_winning(
    project: Path, ok: Callable[..., Any]
) -> None:
    """The state of issue 39: 8001, a killed 8002, then 8003 written by an engram that did not
    finish interrupted writes (the mark removed): both name 8001, both live."""
    first = ok("remember", OLD, "--type", "project-config")
    crashed = engram(
        project, "remember", NEW, "--type", "project-config", **{CRASH_ENV: "after-new-file"}
    )
    assert crashed.returncode == -signal.SIGKILL, crashed.stderr
    mark_path(project / "memory").unlink()
    ok("remember", THIRD, "--type", "project-config")
    forked = Counter(s for m in on_disk(project) for s in m.get("supersedes") or [])
    assert forked[first["id"]] == 2 and len(live(project)) == 2  # the fork, as reported
    fresh(project, "index")
    assert_one_line(project, THIRD)
    memories = {m["wording"]: m for m in on_disk(project)}
    assert memories[NEW]["supersedes"] == [first["id"]]  # the older head keeps its place
    assert memories[THIRD]["supersedes"] == [memories[NEW]["id"]]
    assert memories[OLD]["superseded_by"] == memories[NEW]["id"]
    assert all_wordings(project) == {OLD, NEW, THIRD}  # nothing deleted
    assert searched(ok, "API listens port") == {THIRD}
    history = ok("history", first["id"])
    assert {e["wording"] for e in history["entries"]} == {OLD, NEW, THIRD}
    ok("rebuild")
    assert_one_line(project, THIRD)
    assert searched(ok, "API listens port") == {THIRD}


def test_remember_killed_at_random_moments_never_leaves_two_live_heads(
    project: Path, ok: Callable[..., Any]
) -> None:
    """Real kill -9s of `engram remember` at random moments (a seeded draw, printed on failure),
    each followed by a write that completes: one live head, no fork, after each of them."""
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    ok("remember", "The API listens on port 9000.", "--type", "project-config")
    done = {"The API listens on port 9000."}
    for round_ in range(6):
        text = f"The API listens on port {9001 + 2 * round_}."
        proc = subprocess.Popen(
            [sys.executable, "-m", "engram", "remember", text, "--type", "project-config"],
            cwd=project,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(rng.uniform(0.3, 4.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=300)
        if proc.returncode == 0:
            done.add(text)
        after = f"The API listens on port {9002 + 2 * round_}."
        ok("remember", after, "--type", "project-config")
        done.add(after)
        assert done <= all_wordings(project), f"seed {seed}"
        heads = live(project)
        assert [m["wording"] for m in heads] == [after], f"seed {seed}: {heads}"
        assert_no_fork(project)
    fresh(project, "index")
    assert_one_line(project, after)
    assert searched(ok, "API listens port") == {after}
