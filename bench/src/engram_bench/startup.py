"""Cold start-up of the CLI: every host hook starts a fresh ``engram`` process, so its import
cost is paid at each session start. Measured as wall time of a new process, against
``python -c "import numpy"`` in the same run (the floor: any command that touches a store
imports numpy), each command run in turn with the others so load drifts hit all alike.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Name → arguments after `engram`; the floor runs the interpreter alone.
COMMANDS: dict[str, list[str]] = {
    "engram --version": ["--version"],
    "engram recall": ["recall"],
    "engram search": ["search", "billing owner"],
    "engram hooks run session-start": ["hooks", "run", "session-start"],
}
FLOOR = 'python -c "import numpy"'
# What issue #26 asks of the commands every host hook pays for.
TARGETS = {"engram --version": 1.5, "engram hooks run session-start": 1.5}

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


def _wall_ms(argv: list[str], cwd: Path) -> tuple[float, int]:
    began = time.perf_counter()
    proc = subprocess.run(
        argv, cwd=cwd, input="", capture_output=True, text=True, timeout=300, check=False
    )
    return (time.perf_counter() - began) * 1000.0, proc.returncode


def run_startup(workdir: Path, *, repeats: int, log: Callable[[str], None]) -> dict[str, Any]:
    """Median wall time of each command over ``repeats`` rounds, and its ratio to the floor.
    The project is empty (an engram.toml, no notes), with the hash embedder, so the figures are
    start-up and not a model's load."""
    project = workdir / "startup-project"
    project.mkdir(parents=True, exist_ok=True)
    (project / "engram.toml").write_text(CONFIG, encoding="utf-8")
    runs: dict[str, list[float]] = {FLOOR: [], **{name: [] for name in COMMANDS}}
    failures: dict[str, int] = {}
    base = engram_argv()
    for _ in range(repeats):
        runs[FLOOR].append(_wall_ms([sys.executable, "-c", "import numpy"], project)[0])
        for name, args in COMMANDS.items():
            ms, code = _wall_ms([*base, *args], project)
            runs[name].append(ms)
            if code != 0:
                failures[name] = code
    floor = statistics.median(runs[FLOOR])
    rows = [
        {
            "command": name,
            "median_ms": statistics.median(times),
            "x_floor": statistics.median(times) / floor,
            "target_x_floor": TARGETS.get(name),
            "exit_code": failures.get(name, 0),
        }
        for name, times in runs.items()
        if name != FLOOR
    ]
    log(
        f"startup: floor {floor:.0f} ms; "
        + ", ".join(f"{r['command']} {r['x_floor']:.2f}x" for r in rows)
    )
    return {"floor": FLOOR, "floor_ms": floor, "repeats": repeats, "commands": rows}


def render(startup: dict[str, Any]) -> list[str]:
    """The report's start-up table."""
    lines = [
        "",
        "### CLI start-up (cold process)",
        "",
        f"Median wall time of a new process over {startup['repeats']} rounds, in an empty project "
        f"(hash embedder), against `{startup['floor']}` in the same run "
        f"({startup['floor_ms']:.0f} ms).",
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
