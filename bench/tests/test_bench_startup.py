"""The start-up bench runs every command as a user's shell would and compares it with the numpy
floor of the same run; the figures themselves are the report's, not the test's."""

from __future__ import annotations

from pathlib import Path

from engram_bench.startup import FLOOR, PROMPT_HOOK, commands, render, run_startup


def test_every_command_starts_exits_zero_and_is_set_against_the_floor(tmp_path: Path) -> None:
    said: list[str] = []
    startup = run_startup(tmp_path, repeats=1, log=said.append, many=30)
    assert startup["floor"] == FLOOR and startup["floor_ms"] > 0
    rows = {r["command"]: r for r in startup["commands"]}
    assert set(rows) == set(commands(30))
    for row in rows.values():
        assert row["exit_code"] == 0, row
        assert row["x_floor"] == row["median_ms"] / startup["floor_ms"]
    assert rows["engram --version"]["target_x_floor"] == 1.5
    assert rows[f"{PROMPT_HOOK} (30 memories)"]["target_x_floor"] == 1.0
    table = "\n".join(render(startup))
    assert "| `engram hooks run session-start` |" in table and "<= 1.5x" in table
    assert said and said[0].startswith("startup: floor")
