"""Cold start-up of the CLI: every host hook starts a fresh ``engram`` process, so its import
cost is paid at each session start. Measured as wall time of a new process, against
``python -c "import numpy"`` in the same run (the floor: any command that touches a store
imports numpy), each command run in turn with the others so load drifts hit all alike.

The session-start hook runs as Claude Code runs it (its JSON on stdin, naming a transcript in a
transcript folder of the run's own), in an empty project, after the detached capture of the
previous round has finished: "no pending capture". It is timed twice a round: as a session
start finds it (the stamp of the last recall in place) and with that stamp removed (a
capture round done before, no stamp: the first-start shortcut, ``engram.hosts.first_start``, or
the full path when that cannot answer). ``(first start)`` is a new project each round: no
``.engram`` folder, no capture round, no stamp, as a user's first session in a new project
meets it. The rows marked ``(3 memories)`` run in a second project holding three remembered
memories, where a session start serves the last block from the stamp when nothing changed
(``engram.hosts.quiet``).

The rows marked ``(1,000 memories)`` run in a third project of that many remembered memories:
the session start, and the per-prompt hook (``engram hooks run prompt``, Claude Code's
``UserPromptSubmit`` JSON with a new session id each round, so it finds and prints memories
every time). ``(empty payload)`` sends nothing on stdin: the session start in the empty
project, the prompt hook in the large one.

Python may write bytecode (``PYTHONDONTWRITEBYTECODE`` is dropped from the commands'
environment): an installed package ships compiled, and a cold start that recompiles every
module of a source checkout measures the checkout, not engram.
``python -m engram_bench.startup OUT.md [--repeats N]`` runs this section alone.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.hosts import quiet

HOOK = "engram hooks run session-start"
FULL_HOOK = f"{HOOK} (no stamp)"
FIRST_HOOK = f"{HOOK} (first start)"
WITH_MEMORIES = " (3 memories)"
HOOK_ARGS = ["hooks", "run", "session-start", "--host", "claude-code", "--timeout", "55"]
PROMPT_HOOK = "engram hooks run prompt"
PROMPT_ARGS = ["hooks", "run", "prompt", "--host", "claude-code", "--timeout", "4"]
EMPTY = " (empty payload)"
MANY = 1000  # memories in the large project


def many_label(count: int) -> str:
    return f" ({count:,} memories)"


def commands(many: int = MANY) -> dict[str, list[str]]:
    """Name → arguments after `engram`; the floor runs the interpreter alone."""
    large = many_label(many)
    return {
        "engram --version": ["--version"],
        "engram recall": ["recall"],
        "engram search": ["search", "billing owner"],
        HOOK: HOOK_ARGS,
        FULL_HOOK: HOOK_ARGS,
        FIRST_HOOK: HOOK_ARGS,
        f"{HOOK}{EMPTY}": HOOK_ARGS,
        f"engram recall{WITH_MEMORIES}": ["recall"],
        f"engram search{WITH_MEMORIES}": ["search", "billing owner"],
        f"{HOOK}{WITH_MEMORIES}": HOOK_ARGS,
        f"{HOOK}{large}": HOOK_ARGS,
        f"{PROMPT_HOOK}{large}": PROMPT_ARGS,
        f"{PROMPT_HOOK}{EMPTY}": PROMPT_ARGS,
    }


COMMANDS = commands()
MEMORIES = (
    ("The billing owner is Alice; invoices go through her.", "decision"),
    ("Prefer pytest over unittest in this repository.", "preference"),
    ("The store is SQLite with the hash embedder in tests.", "note"),
)
FLOOR = 'python -c "import numpy"'
# What issues #26 and #38 ask of the commands every host hook pays for.
TARGETS = {
    "engram --version": 1.5,
    HOOK: 1.5,
    FULL_HOOK: 1.5,
    FIRST_HOOK: 1.5,
    f"{HOOK}{EMPTY}": 1.5,
    f"{PROMPT_HOOK}{EMPTY}": 1.5,
}


def targets(many: int) -> dict[str, float]:
    large = many_label(many)
    return TARGETS | {f"{HOOK}{large}": 1.5, f"{PROMPT_HOOK}{large}": 1.0}


SERVICES = [
    "billing",
    "search",
    "checkout",
    "ledger",
    "payroll",
    "gateway",
    "inventory",
    "mailer",
    "scheduler",
    "reports",
    "identity",
    "catalog",
    "pricing",
    "shipping",
    "refunds",
    "analytics",
    "exporter",
    "importer",
    "uploads",
    "thumbnails",
]
PEOPLE = ["Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun"]
DAYS = ["Mondays", "Tuesdays", "Wednesdays", "Thursdays", "Fridays"]
PROMPTS = tuple(f"Who maintains the {s} worker and when does it deploy?" for s in SERVICES)


def stock_lines(count: int) -> list[str]:
    """``count`` distinct facts, each about a subject of its own (module ``i``)."""
    return [
        f"Module {SERVICES[i % len(SERVICES)]}-{i} of the {SERVICES[i % len(SERVICES)]} worker "
        f"is maintained by {PEOPLE[(i // len(SERVICES)) % len(PEOPLE)]} and deploys on "
        f"{DAYS[i % len(DAYS)]}; ticket prefix M{i}."
        for i in range(count)
    ]


def stock(project: Path, count: int) -> None:
    """Write ``count`` memory files as ``engram remember`` lays them out (frontmatter, one
    folder per type): remembering a thousand one by one, each judged against its neighbours,
    takes minutes, and what is timed here is reading them, not writing them."""
    folder = project / "memory" / "fact"
    folder.mkdir(parents=True, exist_ok=True)
    for i, text in enumerate(stock_lines(count)):
        front = (
            f"id: 20260101-000000-{i:06x}\ntitle: '{text}'\ntype: fact\nscope: project\n"
            f"tags: []\ncreated_at: '2026-01-01T00:00:{i % 60:02d}.000+00:00'\nsource: agent\n"
        )
        (folder / f"module-{i}.md").write_text(f"---\n{front}---\n{text}\n", encoding="utf-8")


SETTLE_CAP = 300.0  # seconds a round waits, at most, for the previous hook's capture to finish

CONFIG = """[store]
backend = "sqlite"
path = ".engram/index.sqlite"

[embedder]
provider = "hash"
"""


def engram_argv() -> list[str]:
    """The console script beside this interpreter, as a user's shell runs it; else -m engram."""
    script = Path(sys.executable).parent / "engram"
    return [str(script)] if script.is_file() else [sys.executable, "-m", "engram"]


def _wall_ms(argv: list[str], cwd: Path, env: dict[str, str], stdin: str = "") -> tuple[float, int]:
    began = time.perf_counter()
    proc = subprocess.run(
        argv,
        cwd=cwd,
        input=stdin,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return (time.perf_counter() - began) * 1000.0, proc.returncode


def _done_ns(state: Path) -> int | None:
    """When the last finished capture round began (``capture.done``'s mtime), if any did."""
    try:
        return (state / "capture.done").stat().st_mtime_ns
    except OSError:
        return None


def _settle(state: Path, before: int | None) -> None:
    """Wait until the detached capture the last hook started has finished its round: a round
    newer than ``before`` (``_done_ns`` taken before the hook) is done and none is running.
    (An older ``capture.done`` alone is no proof: the next command would then meet the new
    capture still running, and a session start waits for a running capture.)"""
    cap = time.monotonic() + SETTLE_CAP
    while time.monotonic() < cap:
        running = (state / "capture.pid").exists() or (state / "capture.again").exists()
        done = _done_ns(state)
        if done is not None and done != before and not running:
            return
        time.sleep(0.05)


def _world(workdir: Path, name: str = "startup-project") -> tuple[Path, dict[str, str], str]:
    """An empty project, an environment of its own (no user memories, no user config) and the
    JSON Claude Code sends at session start."""
    project = workdir / name
    project.mkdir(parents=True, exist_ok=True)
    (project / "engram.toml").write_text(CONFIG, encoding="utf-8")
    home = workdir / "startup-home"
    transcripts = home / ".claude" / "projects" / name
    transcripts.mkdir(parents=True, exist_ok=True)
    dropped = ("ENGRAM_", "CLAUDE_", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env |= {
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
    }
    payload = {
        "session_id": "bench",
        "transcript_path": str(transcripts / "bench.jsonl"),
        "cwd": str(project),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    return project, env, json.dumps(payload)


def _prompt_payload(sent: str, round_: int) -> str:
    """Claude Code's UserPromptSubmit JSON, a new session each round (nothing seen yet)."""
    payload = json.loads(sent)
    payload |= {
        "session_id": f"bench-prompt-{round_}",
        "hook_event_name": "UserPromptSubmit",
        "prompt": PROMPTS[round_ % len(PROMPTS)],
    }
    return json.dumps(payload)


def _place(
    name: str,
    args: list[str],
    round_: int,
    worlds: dict[str, tuple[Path, str]],
    workdir: Path,
    many: int,
) -> tuple[Path, str]:
    """Where a command runs this round and what it gets on stdin (hooks only read it)."""
    where, sent = worlds["three"] if name.endswith(WITH_MEMORIES) else worlds["empty"]
    if name.endswith(many_label(many)):
        where, sent = worlds["large"]
    if args is PROMPT_ARGS:
        where, sent = worlds["large"][0], _prompt_payload(worlds["large"][1], round_)
    if name.endswith(EMPTY):
        sent = ""
    if name == FIRST_HOOK:
        where, _, sent = _world(workdir, f"startup-first-{round_}")
    if name == FULL_HOOK:
        (where / ".engram" / quiet.STAMP).unlink(missing_ok=True)
    return where, sent


def run_startup(
    workdir: Path, *, repeats: int, log: Callable[[str], None], many: int = MANY
) -> dict[str, Any]:
    """Median wall time of each command over ``repeats`` rounds, and its ratio to the floor.
    The projects are empty (an engram.toml, no notes) or hold three or ``many`` memories, with
    the hash embedder, so the figures are start-up and not a model's load."""
    project, env, payload = _world(workdir)
    stocked, _, stocked_payload = _world(workdir, "startup-memories")
    large, _, large_payload = _world(workdir, "startup-many")
    named = commands(many)
    runs: dict[str, list[float]] = {FLOOR: [], **{name: [] for name in named}}
    failures: dict[str, int] = {}
    base = engram_argv()
    for text, kind in MEMORIES:
        if _wall_ms([*base, "remember", text, "--type", kind], stocked, env)[1] != 0:
            raise RuntimeError(f"engram remember failed in {stocked}")
    stock(large, many)
    if _wall_ms([*base, "index"], large, env)[1] != 0:
        raise RuntimeError(f"engram index failed in {large}")
    # One session start first in each project: it writes the stamp (where nothing is found)
    # and the first capture round, as a user's first session would; the rounds then time what
    # every later session pays.
    # (In the large project that first round also writes the per-prompt hook's snapshot.)
    for where, sent in ((project, payload), (stocked, stocked_payload), (large, large_payload)):
        before = _done_ns(where / ".engram")
        _wall_ms([*base, *HOOK_ARGS], where, env, sent)
        _settle(where / ".engram", before)
    worlds = {"empty": (project, payload), "three": (stocked, stocked_payload)}
    worlds["large"] = (large, large_payload)
    for round_ in range(repeats):
        runs[FLOOR].append(_wall_ms([sys.executable, "-c", "import numpy"], project, env)[0])
        for name, args in named.items():
            where, sent = _place(name, args, round_, worlds, workdir, many)
            hook = args is HOOK_ARGS
            before = _done_ns(where / ".engram")
            ms, code = _wall_ms(
                [*base, *args], where, env, sent if hook or args is PROMPT_ARGS else ""
            )
            runs[name].append(ms)
            if code != 0:
                failures[name] = code
            if hook:
                _settle(where / ".engram", before)
    floor = statistics.median(runs[FLOOR])
    rows = [
        {
            "command": name,
            "median_ms": statistics.median(times),
            "x_floor": statistics.median(times) / floor,
            "target_x_floor": targets(many).get(name),
            "exit_code": failures.get(name, 0),
        }
        for name, times in runs.items()
        if name != FLOOR
    ]
    log(
        f"startup: floor {floor:.0f} ms; "
        + ", ".join(f"{r['command']} {r['x_floor']:.2f}x" for r in rows)
    )
    return {"floor": FLOOR, "floor_ms": floor, "repeats": repeats, "many": many, "commands": rows}


def render(startup: dict[str, Any]) -> list[str]:
    """The report's start-up table."""
    lines = [
        "",
        "### CLI start-up (cold process)",
        "",
        f"Median wall time of a new process over {startup['repeats']} rounds, in an empty project "
        f"(hash embedder) or one with three or {startup.get('many', MANY):,} memories, against "
        f"`{startup['floor']}` in the same run "
        f"({startup['floor_ms']:.0f} ms). The session-start hook runs with Claude Code's JSON "
        "and no pending capture; `(no stamp)` after a capture round with the stamp removed, "
        "`(first start)` in a new project each round (no `.engram` folder yet); the prompt hook "
        "with Claude Code's UserPromptSubmit JSON, a new session each round; `(empty payload)`: "
        "nothing on stdin.",
        "",
        "| command | median ms | x floor | target | exit |",
        "|---|---|---|---|---|",
    ]
    for row in startup["commands"]:
        target = f"<= {row['target_x_floor']}x" if row["target_x_floor"] else ""
        lines.append(
            f"| `{row['command']}` | {row['median_ms']:.0f} | {row['x_floor']:.2f} | {target} "
            f"| {row['exit_code']} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    """Run this section alone and write its table (and the machine) to a markdown file."""
    import argparse
    import shutil
    import tempfile

    from engram_bench import machine

    parser = argparse.ArgumentParser(prog="python -m engram_bench.startup")
    parser.add_argument("out", type=Path)
    parser.add_argument("--repeats", type=int, default=31)
    parser.add_argument("--memories", type=int, default=MANY)
    args = parser.parse_args(argv)
    info = machine.machine_info()
    workdir = Path(tempfile.mkdtemp(prefix="engram-startup-"))
    try:
        startup = run_startup(workdir, repeats=args.repeats, log=print, many=args.memories)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    head = [
        f"# CLI start-up, {machine.today()} ({machine.machine_slug(info)})",
        "",
        f"Revision {machine.source_revision()}; {info.get('cpu')}, "
        f"{info.get('cores')} cores shared with other work (load average at the end: "
        f"{machine.load_average()}). `python -m engram_bench.startup` ({args.repeats} rounds).",
    ]
    args.out.write_text("\n".join([*head, *render(startup)]) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
