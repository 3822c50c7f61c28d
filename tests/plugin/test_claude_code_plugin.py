"""The Claude Code plugin (``plugins/claude-code``) and the repository's marketplace
(``.claude-plugin/marketplace.json``): valid against the schemas SchemaStore publishes for them
(vendored in ``schemas/``, see its SOURCE.md), and working as installed.

``/plugin install engram@engram`` copies the plugin into Claude Code's plugin cache
(``<config>/plugins/cache/<marketplace>/<plugin>/<version>/``), records it in
``plugins/installed_plugins.json`` and enables it in ``settings.json`` (``enabledPlugins``);
the marketplace itself is cloned to ``plugins/marketplaces/<marketplace>/`` and listed in
``plugins/known_marketplaces.json``. The tests lay a fake config out that way, read the hooks
back as Claude Code does (enabled plugin → install path → ``hooks/hooks.json``, with
``${CLAUDE_PLUGIN_ROOT}`` replaced) and run each command through a shell with a recorded
payload on stdin, against a real project (SQLite store, hash embedder)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from agent_support import copy_fixtures, wait_until
from engram.config import load_config
from engram.memory import Memory

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "plugins" / "claude-code"
MARKETPLACE = REPO / ".claude-plugin" / "marketplace.json"
SCHEMAS = Path(__file__).parent / "schemas"
BIN = Path(sys.executable).parent  # the venv's bin: where the user's `engram` is on PATH
DECISION = "We decided to deploy on Tuesdays after the change review."
FACT = "The billing service is owned by Alice; invoices go through her team."
OTHER = "The staging database is refreshed from production every night at two."


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def schema(name: str) -> dict[str, Any]:
    data: dict[str, Any] = load(SCHEMAS / f"{name}.json")
    return data


def validate(document: Any, against: dict[str, Any]) -> None:
    jsonschema.Draft7Validator(against).validate(document)


# ------------------------------------------------------------------ manifests


def test_the_plugin_manifest_matches_the_published_schema() -> None:
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    validate(manifest, schema("claude-code-plugin-manifest"))
    assert manifest["name"] == "engram"
    from engram import __version__

    assert manifest["version"] == __version__, "the plugin moves with the engram it runs"


def test_the_marketplace_matches_the_published_schema_and_lists_the_plugin() -> None:
    marketplace = load(MARKETPLACE)
    validate(marketplace, schema("claude-code-marketplace"))
    (entry,) = marketplace["plugins"]
    folder = (MARKETPLACE.parent.parent / entry["source"]).resolve()
    assert folder == PLUGIN
    manifest = load(folder / ".claude-plugin" / "plugin.json")
    assert (entry["name"], entry["version"]) == (manifest["name"], manifest["version"])


def test_hooks_json_and_mcp_json_match_the_manifest_schema_for_them() -> None:
    """hooks/hooks.json has the shape plugin.json's inline ``hooks`` has (the schema's second
    form), .mcp.json the shape of its ``mcpServers``; every command goes through the plugin
    root, so the plugin works from wherever Claude Code put it."""
    manifest_schema = schema("claude-code-plugin-manifest")
    hooks = load(PLUGIN / "hooks" / "hooks.json")
    validate({"name": "engram", "hooks": hooks["hooks"]}, manifest_schema)
    mcp = load(PLUGIN / ".mcp.json")
    validate({"name": "engram", "mcpServers": mcp["mcpServers"]}, manifest_schema)
    assert set(hooks["hooks"]) == {"SessionStart", "UserPromptSubmit", "SessionEnd", "PreCompact"}
    for command in commands_of(hooks["hooks"]).values():
        assert "${CLAUDE_PLUGIN_ROOT}/scripts/engram.sh" in command
    assert mcp["mcpServers"]["engram"]["args"] == ["${CLAUDE_PLUGIN_ROOT}/scripts/engram.sh", "mcp"]


def test_the_schema_refuses_what_claude_code_refuses() -> None:
    """The vendored schema bites: an unknown hook event and a nameless manifest fail."""
    manifest_schema = schema("claude-code-plugin-manifest")
    with pytest.raises(jsonschema.ValidationError):
        validate({"name": "engram", "hooks": {"SessionBegin": []}}, manifest_schema)
    with pytest.raises(jsonschema.ValidationError):
        validate({"version": "1.0.0"}, manifest_schema)
    with pytest.raises(jsonschema.ValidationError):
        validate({"name": "x", "plugins": []}, schema("claude-code-marketplace"))


def test_the_slash_commands_say_what_they_do_and_use_the_mcp_tools() -> None:
    """/engram:remember and /engram:recall: a description for the menu, the user's words as
    $ARGUMENTS handed to an MCP tool (never spliced into a shell command)."""
    found = {p.stem: p.read_text(encoding="utf-8") for p in (PLUGIN / "commands").glob("*.md")}
    assert set(found) == {"remember", "recall"}
    tools = {"remember": "memory_store", "recall": "memory_search"}
    for name, text in found.items():
        front = re.match(r"---\n(.*?)\n---\n", text, re.S)
        assert front is not None and "description:" in front.group(1)
        assert "$ARGUMENTS" in text and f"`{tools[name]}`" in text
        assert "!`" not in text, "no shell command runs with the user's words"


# ------------------------------------------------------------------ installed as /plugin does


def commands_of(hooks: dict[str, Any]) -> dict[str, str]:
    """Claude Code event → the one command our plugin runs for it."""
    found = {}
    for event, groups in hooks.items():
        (group,) = groups
        (hook,) = group["hooks"]
        found[event] = hook["command"]
    return found


def install(config_dir: Path) -> None:
    """Lay the marketplace and the plugin out as ``/plugin marketplace add`` and ``/plugin
    install engram@engram`` do."""
    manifest = load(PLUGIN / ".claude-plugin" / "plugin.json")
    version = manifest["version"]
    plugins = config_dir / "plugins"
    market = plugins / "marketplaces" / "engram"
    shutil.copytree(MARKETPLACE.parent, market / ".claude-plugin")
    shutil.copytree(PLUGIN, market / "plugins" / "claude-code")
    cache = plugins / "cache" / "engram" / "engram" / version
    shutil.copytree(PLUGIN, cache)
    now = datetime.now(UTC).isoformat()
    (plugins / "known_marketplaces.json").write_text(
        json.dumps(
            {
                "engram": {
                    "source": {"source": "github", "repo": "OWNER/engram"},
                    "installLocation": str(market),
                    "lastUpdated": now,
                }
            }
        )
    )
    record = {"scope": "user", "installPath": str(cache), "version": version}
    (plugins / "installed_plugins.json").write_text(
        json.dumps(
            {
                "version": 2,
                "plugins": {"engram@engram": [{**record, "installedAt": now, "lastUpdated": now}]},
            }
        )
    )
    (config_dir / "settings.json").write_text(
        json.dumps({"enabledPlugins": {"engram@engram": True}})
    )


def installed_commands(config_dir: Path) -> tuple[Path, dict[str, str]]:
    """What Claude Code runs: the enabled plugin's install path and its hook commands, with
    ``${CLAUDE_PLUGIN_ROOT}`` replaced by that path."""
    enabled = [k for k, on in load(config_dir / "settings.json")["enabledPlugins"].items() if on]
    installed = load(config_dir / "plugins" / "installed_plugins.json")["plugins"]
    (key,) = enabled
    root = Path(installed[key][0]["installPath"])
    hooks = load(root / "hooks" / "hooks.json")["hooks"]
    return root, {
        event: command.replace("${CLAUDE_PLUGIN_ROOT}", str(root))
        for event, command in commands_of(hooks).items()
    }


def shell(
    command: str, cwd: Path, env: dict[str, str], payload: Any
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        input=payload if isinstance(payload, str) else json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=180,
    )


@pytest.fixture
def world(tmp_path: Path) -> dict[str, Any]:
    """A fake Claude Code config with the plugin installed, and a project with memories whose
    config names the fixture transcripts (so session end has sessions to capture)."""
    config_dir = tmp_path / "claude"
    install(config_dir)
    opencode, claude = copy_fixtures(tmp_path / "agents")
    project = tmp_path / "project"
    project.mkdir()
    (project / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
        # A small block at session start: the decision only, so a prompt has more to add.
        "[recall]\nbudget = 90\n"
        f'[sessions]\nenabled = true\nscope = "all"\n'
        f'dirs = {{opencode = "{opencode}", claude-code = "{claude}"}}\n',
        encoding="utf-8",
    )
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ENGRAM_", "CLAUDE_"))}
    env |= {
        "PATH": f"{BIN}{os.pathsep}/usr/bin{os.pathsep}/bin",
        "HOME": str(home),
        "XDG_DATA_HOME": str(home / "data"),
        "XDG_CONFIG_HOME": str(home / "config"),
        "CLAUDE_CONFIG_DIR": str(config_dir),
        "CLAUDE_PROJECT_DIR": str(project),
    }
    old = {k: os.environ.get(k) for k in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "HOME")}
    os.environ.update({k: env[k] for k in old})
    try:
        with Memory.open(load_config(start=project)) as memory:
            memory.remember(OTHER, type="fact")
            memory.remember(FACT, type="fact")
            memory.remember(DECISION, type="decision")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    root, commands = installed_commands(config_dir)
    env["CLAUDE_PLUGIN_ROOT"] = str(root)
    transcript = claude / "-home-me-shop" / "0b6f7c3e-1111-4a5b-9c1d-aaaaaaaaaaaa.jsonl"
    return {"project": project, "env": env, "commands": commands, "transcript": transcript}


def payload(world: dict[str, Any], event: str, **more: Any) -> dict[str, Any]:
    return {
        "session_id": "3c1f6a2e-plugin-test",
        "transcript_path": str(world["transcript"]),
        "cwd": str(world["project"]),
        "permission_mode": "default",
        "hook_event_name": event,
        **more,
    }


def context_of(run: subprocess.CompletedProcess[str], event: str) -> str:
    assert run.returncode == 0 and run.stdout, run.stderr
    output = json.loads(run.stdout)["hookSpecificOutput"]
    assert output["hookEventName"] == event
    text: str = output["additionalContext"]
    return text


def test_each_hook_of_the_installed_plugin_does_its_part(world: dict[str, Any]) -> None:
    """Session start prints the block; a prompt adds the relevant memory the block did not
    hold (and not a second time); session end captures the sessions."""
    project, env, commands = world["project"], world["env"], world["commands"]

    start = shell(
        commands["SessionStart"], project, env, payload(world, "SessionStart", source="startup")
    )
    block = context_of(start, "SessionStart")
    assert DECISION in block and FACT not in block

    # The detached capture the session start began writes the per-prompt snapshot.
    snapshot = project / ".engram" / "prompt-index.json"
    wait_until(snapshot.exists, 120, "the per-prompt snapshot")

    ask = payload(world, "UserPromptSubmit", prompt="Who owns the billing invoices?")
    added = context_of(shell(commands["UserPromptSubmit"], project, env, ask), "UserPromptSubmit")
    assert FACT in added and DECISION not in added and OTHER not in added
    assert "memory/fact/" in added  # the path to cite

    again = shell(commands["UserPromptSubmit"], project, env, ask)
    assert (again.returncode, again.stdout) == (0, ""), "the session saw it already"

    end = shell(commands["SessionEnd"], project, env, payload(world, "SessionEnd", reason="exit"))
    assert (end.returncode, end.stdout) == (0, "") and "capturing in the background" in end.stderr
    log = project / ".engram" / "capture.log"
    # Two finished rounds: the start's and the end's (when the end met the start's capture
    # still running, that capture went round once more for it, under the start's name).
    wait_until(
        lambda: log.exists() and log.read_text().count(": notes:") >= 2,
        300,
        "the session end's capture round",
    )
    assert "failed:" not in log.read_text()
    with Memory.open(load_config(start=project)) as memory:
        documents = memory.store.list_documents()
    assert any(doc.startswith("sessions/claude-code/") for doc in documents)


@pytest.mark.parametrize("sent", ["", "not json", "[]", '{"cwd": 7, "prompt": ["x"]}'])
def test_every_hook_takes_an_empty_or_odd_payload_quietly(world: dict[str, Any], sent: str) -> None:
    for event, command in world["commands"].items():
        run = shell(command, world["project"], world["env"], sent)
        assert run.returncode == 0, (event, run.stderr)
        assert "Traceback" not in run.stderr, (event, run.stderr)
        if event in ("UserPromptSubmit", "SessionEnd", "PreCompact"):
            assert run.stdout == "", (event, run.stdout)


def test_without_engram_each_hook_says_so_in_one_line_and_exits_0(
    world: dict[str, Any], tmp_path: Path
) -> None:
    """No engram on PATH, no uvx, no pipx: one line naming the fix, never a failed session."""
    bare = tmp_path / "bare-bin"
    bare.mkdir()
    for tool in ("sh", "bash"):
        found = shutil.which(tool)
        assert found is not None
        (bare / tool).symlink_to(found)
    env = {**world["env"], "PATH": str(bare)}
    for event, command in world["commands"].items():
        run = shell(command, world["project"], env, payload(world, event, prompt="billing?"))
        assert (run.returncode, run.stdout) == (0, ""), event
        (line,) = run.stderr.splitlines()
        assert line.startswith("engram: memory unavailable: no engram command found"), line
        assert "uv tool install" in line


def test_engram_bin_names_the_engram_to_run(world: dict[str, Any], tmp_path: Path) -> None:
    """ENGRAM_BIN wins over PATH (a user's venv); one that is no executable is one line."""
    env = {**world["env"], "PATH": "/usr/bin:/bin", "ENGRAM_BIN": str(BIN / "engram")}
    start = payload(world, "SessionStart", source="startup")
    assert DECISION in context_of(
        shell(world["commands"]["SessionStart"], world["project"], env, start), "SessionStart"
    )
    env["ENGRAM_BIN"] = str(tmp_path / "nothing-here")
    run = shell(world["commands"]["SessionStart"], world["project"], env, start)
    assert (run.returncode, run.stdout) == (0, "")
    assert run.stderr.startswith("engram: memory unavailable: ENGRAM_BIN=")
