"""Every host hook starts the CLI, so a command imports only its own module: no other command's
module, no plugin unless the command needs it, and ``--version`` not even typer or pydantic."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import typer

import engram.cli
from engram.cli import COMMANDS, command_name

PROBE = """
import json, sys
from engram.cli import main
code = main({argv!r})
print(json.dumps({{"code": code, "modules": sorted(sys.modules)}}), file=sys.stderr)
"""


def _start(argv: list[str]) -> tuple[int, str, list[str]]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv)], capture_output=True, text=True, check=False
    )
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    return report["code"], proc.stdout, report["modules"]


def test_the_command_table_names_every_command_of_every_module() -> None:
    found: dict[str, str] = {}
    for info in pkgutil.iter_modules(engram.cli.__path__):
        module = importlib.import_module(f"engram.cli.{info.name}")
        if hasattr(module, "register"):
            app = typer.Typer()
            module.register(app)
            names = [c.name for c in app.registered_commands]
            names += [g.name for g in app.registered_groups]
            found.update({str(name): info.name for name in names})
    assert found == COMMANDS


def test_the_command_is_the_first_word_past_the_global_options() -> None:
    assert command_name(["--config", "x.toml", "--set", "a.b=1", "search", "q"]) == "search"
    assert command_name(["-c", "index", "--store", "sqlite", "recall"]) == "recall"
    assert command_name(["--help"]) is None and command_name([]) is None


def test_version_prints_the_version_without_loading_typer_pydantic_or_numpy() -> None:
    code, out, modules = _start(["--version"])
    assert code == 0 and out == f"engram {engram.__version__}\n"
    assert not {"typer", "pydantic", "numpy"} & set(modules)


def test_a_command_loads_its_own_module_and_no_other() -> None:
    code, out, modules = _start(["search", "--help"])
    assert code == 0 and "Usage: engram search" in out
    commands = {m.removeprefix("engram.cli.") for m in modules if m.startswith("engram.cli.")}
    assert "search" in commands
    assert not (set(COMMANDS.values()) - {"search"}) & commands
    assert not [
        m
        for m in modules
        if m.startswith(("engram_lancedb", "engram_chroma", "engram_postgres", "psycopg"))
    ]


def test_help_without_a_command_still_lists_every_command_and_plugin_command() -> None:
    code, out, _ = _start(["--help"])
    assert code == 0
    for name in (*COMMANDS, "bench"):
        assert f"\n  {name} " in out, name
