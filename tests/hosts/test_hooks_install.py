"""``engram hooks install|uninstall claude-code``: the hooks land in Claude Code's documented
settings format (``hooks.SessionStart`` / ``hooks.SessionEnd`` matcher groups of command hooks
with a ``timeout`` in seconds), merged into what is there, idempotent, removable, and never
written over a file that cannot be read; ``--dry-run`` shows a diff and writes nothing."""

from __future__ import annotations

import json
import shlex
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.hosts.claude_code import install as claude_code
from engram.hosts.command import is_ours
from support import cli

ENGRAM = str(Path(sys.executable).parent / "engram")
Capsys = pytest.CaptureFixture[str]


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    monkeypatch.chdir(folder)
    return folder


def read(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def assert_documented_hooks(data: dict[str, Any]) -> None:
    """Our two matcher groups, each one command hook running the absolute engram with the
    host's 60 s timeout (the runner's own cap, 55 s, is inside it)."""
    for key, event, matcher in (
        ("SessionStart", "session-start", "startup|resume|clear|compact"),
        ("SessionEnd", "session-end", ""),
    ):
        ours = [
            g for g in data["hooks"][key] if any(is_ours(h["command"], event) for h in g["hooks"])
        ]
        assert ours == [
            {
                "matcher": matcher,
                "hooks": [
                    {
                        "type": "command",
                        "command": f"{shlex.quote(ENGRAM)} hooks run {event} "
                        "--host claude-code --timeout 55",
                        "timeout": 60,
                    }
                ],
            }
        ]


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_writes_the_documented_hooks_for_each_scope(
    scope: str, home: Path, project: Path, capsys: Capsys
) -> None:
    code, out, err = cli(capsys, "hooks", "install", "claude-code", "--scope", scope)
    assert code == 0, err
    path = (home if scope == "user" else project) / ".claude" / "settings.json"
    assert out.strip() == f"{path}: create"
    assert_documented_hooks(read(path))
    other = (project if scope == "user" else home) / ".claude"
    assert not other.exists()  # nothing outside the chosen scope's config location


def test_install_keeps_every_other_key_and_hook_and_is_idempotent(
    home: Path, project: Path, capsys: Capsys
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    theirs = {"type": "command", "command": "echo hi", "timeout": 5}
    existing: dict[str, Any] = {
        "permissions": {"allow": ["Bash(npm run test:*)"]},
        "env": {"FOO": "1"},
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [theirs]}],
            "PreToolUse": [{"matcher": "Bash", "hooks": [theirs]}],
        },
    }
    path.write_text(json.dumps(existing), encoding="utf-8")
    path.chmod(0o600)
    assert cli(capsys, "hooks", "install", "claude-code", "--scope", "project")[0] == 0
    # Replaced atomically: same permissions, no temporary file left beside it.
    assert path.stat().st_mode & 0o777 == 0o600
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]
    data = read(path)
    assert_documented_hooks(data)
    assert data["permissions"] == existing["permissions"] and data["env"] == {"FOO": "1"}
    assert data["hooks"]["PreToolUse"] == existing["hooks"]["PreToolUse"]
    assert data["hooks"]["SessionStart"][0] == {"matcher": "startup", "hooks": [theirs]}
    first = path.read_bytes()
    code, out, _ = cli(capsys, "hooks", "install", "claude-code", "--scope", "project")
    assert (code, out.strip()) == (0, f"{path}: unchanged")
    assert path.read_bytes() == first


def test_install_replaces_our_hook_from_another_engram_path(
    home: Path, project: Path, capsys: Capsys
) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    old = {"type": "command", "command": "/old/venv/bin/engram hooks run session-start"}
    path.write_text(
        json.dumps({"hooks": {"SessionStart": [{"matcher": "", "hooks": [old]}]}}),
        encoding="utf-8",
    )
    assert cli(capsys, "hooks", "install", "claude-code")[0] == 0
    data = read(path)
    assert_documented_hooks(data)
    assert "/old/venv" not in json.dumps(data)


def test_uninstall_removes_only_ours(home: Path, project: Path, capsys: Capsys) -> None:
    path = home / ".claude" / "settings.json"
    path.parent.mkdir()
    theirs = {"type": "command", "command": "echo engram is great"}
    existing = {"model": "opus", "hooks": {"SessionEnd": [{"matcher": "", "hooks": [theirs]}]}}
    path.write_text(json.dumps(existing), encoding="utf-8")
    assert cli(capsys, "hooks", "install", "claude-code")[0] == 0
    code, out, _ = cli(capsys, "hooks", "uninstall", "claude-code")
    assert (code, out.strip()) == (0, f"{path}: update")
    assert read(path) == existing
    code, out, _ = cli(capsys, "hooks", "uninstall", "claude-code")
    assert (code, out.strip()) == (0, f"{path}: unchanged")


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ('{"hooks": {', "not valid JSON"),
        ("[1, 2]", "must hold a JSON object"),
        ('{"hooks": []}', '"hooks" must be an object'),
        ('{"hooks": {"SessionEnd": {"matcher": ""}}}', '"hooks.SessionEnd" must be a list'),
    ],
)
def test_a_malformed_settings_file_is_named_and_left_alone(
    text: str, problem: str, home: Path, project: Path, capsys: Capsys
) -> None:
    path = project / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    for command in ("install", "uninstall"):
        code, out, err = cli(capsys, "hooks", command, "claude-code", "--scope", "project")
        assert code == 1 and out == ""
        assert str(path) in err and problem in err and "nothing was written" in err
        assert path.read_text(encoding="utf-8") == text
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]  # no temp file left


def test_dry_run_prints_a_diff_and_writes_nothing(
    home: Path, project: Path, capsys: Capsys
) -> None:
    path = home / ".claude" / "settings.json"
    code, out, _ = cli(capsys, "hooks", "install", "claude-code", "--dry-run")
    assert code == 0 and not path.exists() and not (home / ".claude").exists()
    assert out.startswith(f"--- /dev/null\n+++ {path}\n@@ ")
    created = json.loads("".join(line[1:] for line in out.splitlines(True)[3:]))
    assert_documented_hooks(created)
    path.parent.mkdir()
    path.write_text('{"model": "opus"}\n', encoding="utf-8")
    code, out, _ = cli(capsys, "hooks", "install", "claude-code", "--dry-run")
    assert code == 0 and path.read_text(encoding="utf-8") == '{"model": "opus"}\n'
    assert f"--- {path}\n+++ {path}\n" in out and '-{"model": "opus"}' in out
    code, out, _ = cli(capsys, "hooks", "uninstall", "claude-code", "--dry-run")
    assert out.strip() == f"{path}: nothing to change"


def test_config_given_to_install_is_passed_to_the_hook(
    home: Path, project: Path, capsys: Capsys
) -> None:
    config = project / "engram.toml"
    config.write_text("", encoding="utf-8")
    assert cli(capsys, "--config", str(config), "hooks", "install", "claude-code")[0] == 0
    commands = claude_code.hook_commands(read(home / ".claude" / "settings.json"), "SessionEnd")
    assert commands == [
        f"{shlex.quote(ENGRAM)} --config {shlex.quote(str(config.resolve()))} hooks run "
        "session-end --host claude-code --timeout 55"
    ]


# Other people's hooks and keys, as Claude Code's settings may hold them.
COMMANDS = st.sampled_from(["echo hi", "engram recall", "npx lint", "engram hooks run x", "true"])
HOOK = st.fixed_dictionaries({"type": st.just("command"), "command": COMMANDS})
GROUP = st.fixed_dictionaries(
    {"matcher": st.sampled_from(["", "startup", "Bash"]), "hooks": st.lists(HOOK, max_size=2)}
)
EVENTS = st.sampled_from(["SessionStart", "SessionEnd", "PreToolUse", "Stop"])
SETTINGS = st.fixed_dictionaries(
    {},
    optional={
        "model": st.text(max_size=5),
        "env": st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=2),
        "hooks": st.dictionaries(EVENTS, st.lists(GROUP, min_size=1, max_size=2), max_size=3),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(existing=SETTINGS)
def test_install_then_uninstall_gives_back_the_settings(existing: dict[str, Any]) -> None:
    """Whatever else the file holds: install adds exactly our hooks, a second install changes
    nothing, and uninstall gives back the same settings (an emptied table aside)."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "settings.json"
        path.write_text(json.dumps(existing), encoding="utf-8")
        claude_code.plan_install(path, [ENGRAM]).apply()
        installed = path.read_text(encoding="utf-8")
        assert_documented_hooks(json.loads(installed))
        assert not claude_code.plan_install(path, [ENGRAM]).changed  # idempotent
        claude_code.plan_uninstall(path).apply()
        assert tidy(json.loads(path.read_text(encoding="utf-8"))) == tidy(existing)


def tidy(data: dict[str, Any]) -> dict[str, Any]:
    """Settings with no empty hook table or event list (uninstall drops the ones it empties)."""
    hooks = {key: groups for key, groups in data.get("hooks", {}).items() if groups}
    return {
        **{k: v for k, v in data.items() if k != "hooks"},
        **({"hooks": hooks} if hooks else {}),
    }


def test_claude_config_dir_moves_the_user_settings_and_local_scope_writes_settings_local(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capsys
) -> None:
    moved = tmp_path / "claude-config"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    assert cli(capsys, "hooks", "install", "claude-code")[0] == 0
    assert_documented_hooks(read(moved / "settings.json"))
    assert not (home / ".claude").exists()
    assert cli(capsys, "hooks", "install", "claude-code", "--scope", "local")[0] == 0
    local = project / ".claude" / "settings.local.json"
    assert_documented_hooks(read(local))
    assert not (project / ".claude" / "settings.json").exists()
    assert cli(capsys, "hooks", "uninstall", "claude-code", "--scope", "local")[0] == 0
    assert not local.exists() or "hooks" not in read(local)


def test_pre_compact_is_installed_for_both_kinds_of_compaction(
    home: Path, project: Path, capsys: Capsys
) -> None:
    assert cli(capsys, "hooks", "install", "claude-code")[0] == 0
    [group] = read(home / ".claude" / "settings.json")["hooks"]["PreCompact"]
    assert group["matcher"] == "manual|auto"
    [hook] = group["hooks"]
    assert hook["command"] == (
        f"{shlex.quote(ENGRAM)} hooks run pre-compact --host claude-code --timeout 55"
    )


def test_an_unknown_host_or_scope_is_one_clear_error(
    home: Path, project: Path, capsys: Capsys
) -> None:
    code, _, err = cli(capsys, "hooks", "install", "cursor-x")
    assert code != 0 and "claude-code, opencode" in err and "Traceback" not in err
    code, _, err = cli(capsys, "hooks", "install", "opencode", "--scope", "local")
    assert code != 0 and "no local scope" in err and "Traceback" not in err


def test_the_cli_offers_every_registered_host(capsys: Capsys) -> None:
    """Hosts are listed once (``engram.hosts.registry``); the CLI's help and checks read it."""
    from engram.hosts import registry

    for command in ("install", "uninstall", "run"):
        code, out, _ = cli(capsys, "hooks", command, "--help")
        assert code == 0
        for name in registry.names():
            assert name in out
