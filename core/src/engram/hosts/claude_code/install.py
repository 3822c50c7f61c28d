"""Claude Code's install: ``hooks.SessionStart`` / ``SessionEnd`` / ``PreCompact`` in its settings
(``$CLAUDE_CONFIG_DIR/settings.json``, else ``~/.claude/settings.json``, for the user;
``.claude/settings.json`` in a project; ``.claude/settings.local.json`` for this project on this
machine only), merged into what is there: every other key and every other hook stays as it was.

Documented at https://code.claude.com/docs/en/hooks: a matcher group per event,
``{"matcher": ..., "hooks": [{"type": "command", "command": ..., "timeout": seconds}]}``; the
hook reads ``session_id``, ``transcript_path``, ``cwd`` and ``hook_event_name`` on stdin.
SessionEnd hooks share a 1.5 s budget unless a hook sets ``timeout``, hence ours does (and ours
returns at once anyway: the capture runs detached)."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

from engram.errors import ConfigError
from engram.hosts.command import HOST_TIMEOUT, run_argv, shell_command
from engram.hosts.command import is_ours as _is_ours
from engram.hosts.files import Change, read_text

# The host's name in the hook command lines: ``engram.hosts.claude_code.HOST`` (not imported:
# that module imports this one; the host suite checks the lines name the host).
HOST = "claude-code"
# Our event → (Claude Code's event, its matcher: every source of a start, every end reason,
# both kinds of compaction).
EVENTS = {
    "session-start": ("SessionStart", "startup|resume|clear|compact"),
    "session-end": ("SessionEnd", ""),
    "pre-compact": ("PreCompact", "manual|auto"),
    "prompt": ("UserPromptSubmit", ""),
}
Settings = dict[str, Any]


def settings_path(scope: str, project_dir: Path) -> Path:
    if scope == "user":
        # Imported here: the session-start hook loads this module and must stay light.
        from engram.hosts.claude_code.sessions import config_dir

        return config_dir() / "settings.json"
    name = "settings.local.json" if scope == "local" else "settings.json"
    return project_dir / ".claude" / name


def installed_in(folder: Path) -> bool:
    """Whether our hooks are in this very project's settings (shared or local)."""
    for scope in ("project", "local"):
        try:
            _, settings = _load(settings_path(scope, folder))
        except ConfigError:
            continue
        if any(_is_ours(c, "session-end") for c in hook_commands(settings, "SessionEnd")):
            return True
    return False


def plan_install(path: Path, base: list[str], config: Path | None = None) -> Change:
    """The settings file with our two hooks in it (unchanged when they already are)."""
    old, settings = _load(path)
    new = copy.deepcopy(settings)
    for event, (key, matcher) in EVENTS.items():
        command = shell_command(run_argv(event, HOST, base=base, config=config))
        group = {
            "matcher": matcher,
            "hooks": [{"type": "command", "command": command, "timeout": HOST_TIMEOUT}],
        }
        if not _current(_entries(new, key, path), event, group):
            _strip(new, key, event, path)
            new.setdefault("hooks", {}).setdefault(key, []).append(group)
    return Change(path, old, old if new == settings else _dump(new))


def plan_uninstall(path: Path) -> Change:
    """The settings file without our hooks; everything else is kept."""
    old, settings = _load(path)
    new = copy.deepcopy(settings)
    for event, (key, _) in EVENTS.items():
        _strip(new, key, event, path)
    return Change(path, old, old if new == settings else _dump(new))


def hook_commands(settings: Settings, key: str) -> list[str]:
    """Every command hook configured for ``key`` (what tests and ``--dry-run`` readers check)."""
    found: list[str] = []
    for group in settings.get("hooks", {}).get(key, []):
        for hook in group.get("hooks", []) if isinstance(group, dict) else []:
            if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                found.append(hook["command"])
    return found


def _load(path: Path) -> tuple[str | None, Settings]:
    text = read_text(path)
    if text is None or not text.strip():
        return text, {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno}); "
            "fix it, then install again: nothing was written"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} must hold a JSON object; nothing was written")
    hooks = data.get("hooks", {})
    if not isinstance(hooks, dict):
        raise ConfigError(f'{path}: "hooks" must be an object; nothing was written')
    return text, data


def _entries(settings: Settings, key: str, path: Path) -> list[Any]:
    entries = settings.get("hooks", {}).get(key, [])
    if not isinstance(entries, list):
        raise ConfigError(f'{path}: "hooks.{key}" must be a list; nothing was written')
    return entries


def _hooks_of(group: Any) -> list[Any] | None:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return hooks if isinstance(hooks, list) else None


def _ours(hook: Any, event: str) -> bool:
    return isinstance(hook, dict) and _is_ours(hook.get("command"), event)


def _current(entries: list[Any], event: str, group: dict[str, Any]) -> bool:
    """Exactly one hook of ours for ``event``, in a group equal to the one we would write."""
    ours = [g for g in entries for h in (_hooks_of(g) or []) if _ours(h, event)]
    return len(ours) == 1 and ours[0] == group


def _strip(settings: Settings, key: str, event: str, path: Path) -> None:
    """Remove our hooks for ``event``; a group, list or table left empty by that goes too."""
    entries = _entries(settings, key, path)
    kept: list[Any] = []
    for group in entries:
        hooks = _hooks_of(group)
        if hooks is None:
            kept.append(group)
            continue
        others = [h for h in hooks if not _ours(h, event)]
        if others or len(others) == len(hooks):
            kept.append({**group, "hooks": others})
    if len(kept) == len(entries) and kept == entries:
        return
    table = settings["hooks"]
    if kept:
        table[key] = kept
    else:
        del table[key]
        if not table:
            del settings["hooks"]


def _dump(settings: Settings) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"
