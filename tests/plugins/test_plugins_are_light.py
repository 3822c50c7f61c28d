"""Loading plugins must stay cheap: every `engram` command loads every installed plugin, so a
plugin module may not import its engine (LanceDB, Chroma, an SDK, a model) until it is used, and
a plugin's commands (register_commands) may not import their work until they run."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("lancedb", "pyarrow", "chromadb", "onnxruntime", "torch", "openai", "voyageai", "mcp")

PROBE = f"""
import json, sys
from engram.plugins import build_registry, get_plugin_manager
registry = build_registry(get_plugin_manager())
print(json.dumps({{"stores": registry.names("store"),
                   "heavy": sorted(m for m in {HEAVY!r} if m in sys.modules)}}))
"""

# The CLI as `engram` starts it: core's commands, then every plugin's (engram-bench's bench).
CLI_PROBE = f"""
import json, sys
from engram.cli import app
print(json.dumps({{"commands": [c.name for c in app.registered_commands],
                   "heavy": sorted(m for m in {(*HEAVY, "matplotlib")!r} if m in sys.modules)}}))
"""


def test_loading_every_installed_plugin_imports_no_engine() -> None:
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True)
    result = json.loads(proc.stdout)
    assert "sqlite" in result["stores"]
    assert result["heavy"] == [], f"plugin import pulled in {result['heavy']}; import it lazily"


def test_starting_the_cli_with_every_plugin_command_imports_no_engine() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", CLI_PROBE], capture_output=True, text=True, check=True
    )
    result = json.loads(proc.stdout)
    assert "bench" in result["commands"]
    assert result["heavy"] == [], f"the CLI pulled in {result['heavy']}; import it lazily"
