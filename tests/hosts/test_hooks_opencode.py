"""``engram hooks install|uninstall opencode``: our plugin file in OpenCode's documented plugin
folder (``~/.config/opencode/plugins/``, ``.opencode/plugins/``), checked by node and then loaded
by node with the documented plugin context (a ``$`` that really runs the command, a fake
``client``): ``session.created`` runs ``engram hooks run session-start`` and hands the block to
``client.session.prompt`` with ``noReply``; ``session.idle`` runs ``session-end``."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from engram.config import load_config
from engram.hosts import prompt_index
from engram.hosts.job import HookJob
from engram.hosts.opencode import install as opencode
from engram.memory import Memory
from support import cli

ENGRAM = str(Path(sys.executable).parent / "engram")
MEMORY = "Deploys go out on Tuesdays after the change review."
Capsys = pytest.CaptureFixture[str]

# How OpenCode loads a plugin file, ported from its loaders:
# - 1.x (packages/opencode/src/plugin, `readV1Plugin` then `getLegacyPlugins`): a default export
#   `{ id: string, server: function }` is the plugin; otherwise every export must be a function
#   or `{ server: function }`, else "Plugin export is not a function".
# - 2.x (`PluginModule.load`, its `Module` schema): `Schema.Struct({ default: Schema.Union([
#   Schema.Struct({ id: Schema.String, effect: <function> }), Schema.Struct({ id:
#   Schema.String, setup: <function> }) ]) })`; anything else (a bare function too: a Struct
#   wants an object) is `PluginModule.LoadError: Plugin must export a default definition with
#   an id and an effect or setup function.`
# Then the plugin runs with each version's context: V1 `{ project, client, $, directory,
# worktree }` (`$` is Bun's shell, here a tagged template that runs the command for real;
# `client` records prompts) and its hooks get the events; V2 `setup(ctx)` reads the events from
# `ctx.event.subscribe()` and hands context to `ctx.session.synthetic` (recorded). Commands the
# V2 path starts through node:child_process are recorded by wrapping `spawn`.
HARNESS = r"""
import childProcess, { spawnSync } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { pathToFileURL } from "node:url";

const [plugin, directory, events, version] = process.argv.slice(2);
const record = { runs: [], prompts: [], exports: [], loaded: [], messages: [], context: [] };
const pending = [];

const realSpawn = childProcess.spawn;
childProcess.spawn = (command, args, options) => {
  const child = realSpawn(command, args, options);
  const run = { argv: [command, ...args], cwd: options.cwd, input: "", code: null };
  record.runs.push(run);
  const write = child.stdin.end.bind(child.stdin);
  child.stdin.end = (data) => { run.input = JSON.parse(String(data)); return write(data); };
  const closed = (resolve) => child.on("close", (code) => { run.code = code; resolve(); });
  pending.push(new Promise(closed));
  return child;
};
syncBuiltinESMExports();

function loadV1(mod) {
  const def = mod.default;
  if (def && typeof def === "object" && typeof def.id === "string"
      && typeof def.server === "function") return [def.server];
  return Object.values(mod).map((value) => {
    if (typeof value === "function") return value;
    const server = value && typeof value === "object" ? value.server : undefined;
    if (typeof server === "function") return server;
    throw new TypeError("Plugin export is not a function");
  });
}

function loadV2(mod) {
  const def = mod.default;
  const fine = def !== null && typeof def === "object" && typeof def.id === "string"
    && (typeof def.effect === "function" || typeof def.setup === "function");
  if (!fine) throw new Error("PluginModule.LoadError: Plugin must export a default definition "
                             + "with an id and an effect or setup function.");
  return def;
}

const $ = (strings, ...values) => {
  const state = { cwd: process.cwd(), quiet: false, nothrow: false };
  const exec = async () => {
    if (JSON.stringify(strings) !== JSON.stringify(["", " < ", ""])) {
      throw new Error("unexpected shell template " + JSON.stringify(strings));
    }
    const [argv, payload] = values;
    const input = await payload.text();
    const proc = spawnSync(argv[0], argv.slice(1), { cwd: state.cwd, input });
    record.runs.push({ argv, cwd: state.cwd, input: JSON.parse(input), code: proc.status,
                       quiet: state.quiet, nothrow: state.nothrow });
    return { stdout: proc.stdout, stderr: proc.stderr, exitCode: proc.status };
  };
  const shell = {
    cwd(dir) { state.cwd = dir; return shell; },
    quiet() { state.quiet = true; return shell; },
    nothrow() { state.nothrow = true; return shell; },
    then(ok, fail) { const run = exec(); pending.push(run); return run.then(ok, fail); },
  };
  return shell;
};
const client = { session: { prompt: async (request) => { record.prompts.push(request); } } };

const module = await import(pathToFileURL(plugin).href);
record.exports = Object.keys(module);
if (version === "v1") {
  const [factory] = loadV1(module);
  record.loaded.push("v1");
  const hooks = await factory({ project: {}, client, $, directory, worktree: directory });
  for (const event of JSON.parse(events)) {
    if (event.type === "compacting") {
      const compacting = hooks["experimental.session.compacting"];
      const output = { context: [] };
      await compacting({ sessionID: event.sessionID }, output);
      record.context.push(...output.context);
    } else if (event.type === "message") {  // a new user message, as chat.message gets it
      const output = {
        message: { id: "msg_user", sessionID: event.sessionID, role: "user" },
        parts: [{ id: "prt_user", type: "text", text: event.text }],
      };
      await hooks["chat.message"]({ sessionID: event.sessionID }, output);
      record.messages.push(output.parts);
    } else {
      await hooks.event({ event });
    }
    while (pending.length) await pending.shift().catch(() => {});
  }
} else {
  const definition = loadV2(module);
  record.loaded.push("v2");
  const queue = JSON.parse(events);
  let drained;
  const done = new Promise((resolve) => { drained = resolve; });
  const ctx = {
    location: { directory },
    // Ends after the plugin took the last event (the generator resumes when it asks again).
    event: { subscribe: async function* () { for (const event of queue) yield event; drained(); } },
    session: { synthetic: async (request) => { record.prompts.push(request); } },
  };
  record.cleanup = typeof (await definition.setup(ctx));
  await done;
  while (pending.length) await pending.shift().catch(() => {});
}
process.stdout.write(JSON.stringify(record));
"""


def node() -> str:
    found = shutil.which("node")
    assert found, "node is needed to check the OpenCode plugin: install Node.js (>= 18)"
    return found


def load_plugin(
    plugin: Path, directory: Path, events: list[dict[str, Any]], version: str = "v1"
) -> Any:
    """Load ``plugin`` under node as OpenCode ``version`` (v1 / v2) would, fire ``events``;
    what it did. A loader that rejects the file fails the run."""
    module = plugin.parent / "engram-plugin.mjs"  # node needs .mjs for an ES module
    shutil.copyfile(plugin, module)
    harness = plugin.parent / "harness.mjs"
    harness.write_text(HARNESS, encoding="utf-8")
    proc = subprocess.run(
        [node(), str(harness), str(module), str(directory), json.dumps(events), version],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    return folder


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n', encoding="utf-8"
    )
    monkeypatch.chdir(folder)
    return folder


def created(session: str, directory: Path, **info: str) -> dict[str, Any]:
    """OpenCode's ``session.created`` event (``properties.info`` is the Session)."""
    session_info = {"id": session, "directory": str(directory), **info}
    return {"type": "session.created", "properties": {"info": session_info}}


def argv(event: str) -> list[str]:
    return [ENGRAM, "hooks", "run", event, "--host", "opencode", "--timeout", "55"]


@pytest.mark.parametrize("scope", ["user", "project"])
def test_install_writes_a_plugin_node_accepts(
    scope: str, home: Path, project: Path, capsys: Capsys
) -> None:
    code, out, err = cli(capsys, "hooks", "install", "opencode", "--scope", scope)
    assert code == 0, err
    folder = home / ".config" / "opencode" if scope == "user" else project / ".opencode"
    path = folder / "plugins" / "engram.js"
    assert out.strip() == f"{path}: create"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(opencode.MARKER)
    assert f"const START = {json.dumps(argv('session-start'))};" in text
    assert f"const END = {json.dumps(argv('session-end'))};" in text
    assert f"const COMPACT = {json.dumps(argv('pre-compact'))};" in text
    assert 'export default { id: "engram", server, setup };' in text
    module = path.with_name("check.mjs")
    shutil.copyfile(path, module)
    check = subprocess.run([node(), "--check", str(module)], capture_output=True, text=True)
    assert check.returncode == 0, check.stderr
    module.unlink()
    assert sorted(p.name for p in path.parent.iterdir()) == ["engram.js"]
    other = project / ".opencode" if scope == "user" else home / ".config"
    assert not other.exists()


def test_the_plugin_runs_engram_on_the_documented_events(
    home: Path, project: Path, capsys: Capsys
) -> None:
    with Memory.open(load_config(start=project)) as memory:
        memory.remember(MEMORY)
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    events = [
        created("ses_main", project),
        created("ses_sub", project, parentID="ses_main"),  # a sub-agent's session
        {"type": "message.updated", "properties": {"info": {"id": "msg_1"}}},
        {"type": "session.idle", "properties": {"sessionID": "ses_main"}},
    ]
    record = load_plugin(plugin, project, events)
    assert record["exports"] == ["default"] and record["loaded"] == ["v1"]
    runs = [(r["argv"], r["cwd"], r["input"], r["code"]) for r in record["runs"]]
    assert runs == [
        (argv("session-start"), str(project), {"cwd": str(project)}, 0),
        (argv("session-end"), str(project), {"cwd": str(project)}, 0),
    ]
    assert all(r["quiet"] and r["nothrow"] for r in record["runs"])
    [prompt] = record["prompts"]
    assert prompt["path"] == {"id": "ses_main"}
    assert prompt["body"]["noReply"] is True
    [part] = prompt["body"]["parts"]
    assert part["type"] == "text" and part["synthetic"] is True
    assert part["text"].startswith("# Relevant memories (engram)") and MEMORY in part["text"]


def test_a_broken_memory_sends_nothing_and_breaks_nothing(
    home: Path, project: Path, capsys: Capsys
) -> None:
    (project / "engram.toml").write_text('[store]\nbackend = "no-such-store"\n', encoding="utf-8")
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    record = load_plugin(plugin, project, [created("ses_1", project)])
    assert [r["code"] for r in record["runs"]] == [0]
    assert record["prompts"] == []


def test_install_is_idempotent_and_uninstall_removes_only_our_file(
    home: Path, project: Path, capsys: Capsys
) -> None:
    folder = home / ".config" / "opencode" / "plugins"
    folder.mkdir(parents=True)
    (folder / "theirs.js").write_text("export const Theirs = async () => ({})\n")
    assert cli(capsys, "hooks", "install", "opencode")[0] == 0
    first = (folder / "engram.js").read_bytes()
    code, out, _ = cli(capsys, "hooks", "install", "opencode")
    assert (code, out.strip()) == (0, f"{folder / 'engram.js'}: unchanged")
    assert (folder / "engram.js").read_bytes() == first
    code, out, _ = cli(capsys, "hooks", "uninstall", "opencode")
    assert (code, out.strip()) == (0, f"{folder / 'engram.js'}: remove")
    assert sorted(p.name for p in folder.iterdir()) == ["theirs.js"]
    code, out, _ = cli(capsys, "hooks", "uninstall", "opencode")
    assert (code, out.strip()) == (0, f"{folder / 'engram.js'}: unchanged")


def test_a_plugin_file_we_did_not_write_is_left_alone(
    home: Path, project: Path, capsys: Capsys
) -> None:
    path = project / ".opencode" / "plugins" / "engram.js"
    path.parent.mkdir(parents=True)
    path.write_text("export const Mine = async () => ({})\n", encoding="utf-8")
    for command in ("install", "uninstall"):
        code, out, err = cli(capsys, "hooks", command, "opencode", "--scope", "project")
        assert code == 1 and out == ""
        assert str(path) in err and "not written by engram" in err
        assert path.read_text(encoding="utf-8") == "export const Mine = async () => ({})\n"


def test_dry_run_shows_the_file_and_writes_nothing(
    home: Path, project: Path, capsys: Capsys
) -> None:
    code, out, _ = cli(capsys, "hooks", "install", "opencode", "--scope", "project", "--dry-run")
    path = project / ".opencode" / "plugins" / "engram.js"
    assert code == 0 and not (project / ".opencode").exists()
    assert out.startswith(f"--- /dev/null\n+++ {path}\n@@ -0,0 +1,")
    shown = "".join(line[1:] for line in out.splitlines(True)[3:])
    assert shown == opencode.render([ENGRAM])
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    code, out, _ = cli(capsys, "hooks", "uninstall", "opencode", "--scope", "project", "--dry-run")
    assert out.startswith(f"--- {path}\n+++ /dev/null\n") and path.exists()


def test_xdg_config_home_moves_the_user_plugin_folder(
    home: Path, project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capsys
) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert cli(capsys, "hooks", "install", "opencode")[0] == 0
    assert (tmp_path / "xdg" / "opencode" / "plugins" / "engram.js").is_file()
    assert not (home / ".config").exists()


def test_opencode_2_loads_the_plugin_and_its_setup_runs_engram_on_the_events(
    home: Path, project: Path, capsys: Capsys
) -> None:
    with Memory.open(load_config(start=project)) as memory:
        memory.remember(MEMORY)
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    events = [  # OpenCode 2's events carry `data`
        {"type": "session.created", "data": {"sessionID": "ses_main"}},
        {"type": "session.created", "data": {"sessionID": "ses_sub", "parentID": "ses_main"}},
        {"type": "session.idle", "data": {"sessionID": "ses_main"}},
    ]
    record = load_plugin(plugin, project, events, "v2")
    assert record["loaded"] == ["v2"] and record["cleanup"] == "function"
    runs = [(r["argv"], r["cwd"], r["input"], r["code"]) for r in record["runs"]]
    assert runs == [
        (argv("session-start"), str(project), {"cwd": str(project)}, 0),
        (argv("session-end"), str(project), {"cwd": str(project)}, 0),
    ]
    [prompt] = record["prompts"]
    assert prompt["sessionID"] == "ses_main"
    assert prompt["text"].startswith("# Relevant memories (engram)") and MEMORY in prompt["text"]


def test_the_v2_check_rejects_what_opencode_2_drops(tmp_path: Path, project: Path) -> None:
    """The ported check can fail: a V1-only plugin (a bare function, as engram wrote before)
    is refused by OpenCode 2's schema, as OpenCode 2 refuses it."""
    old = tmp_path / "old.js"
    old.write_text("export default async () => ({});\n", encoding="utf-8")
    module = old.with_name("engram-plugin.mjs")
    shutil.copyfile(old, module)
    harness = old.with_name("harness.mjs")
    harness.write_text(HARNESS, encoding="utf-8")
    proc = subprocess.run(
        [node(), str(harness), str(module), str(project), "[]", "v2"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode != 0 and "PluginModule.LoadError" in proc.stderr


def test_opencode_1_compaction_hook_captures_first_then_carries_the_block(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """The capture starts first; then the recall block goes into the compaction's
    ``output.context``, so the summary the compacted session starts from carries it."""
    with Memory.open(load_config(start=project)) as memory:
        memory.remember(MEMORY)
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    record = load_plugin(plugin, project, [{"type": "compacting", "sessionID": "ses_main"}])
    runs = [(r["argv"], r["input"], r["code"]) for r in record["runs"]]
    assert runs == [
        (argv("pre-compact"), {"cwd": str(project)}, 0),
        (argv("session-start"), {"cwd": str(project), "session_id": "ses_main"}, 0),
    ]
    [context] = record["context"]
    assert context.startswith("# Relevant memories (engram)") and MEMORY in context


def test_opencode_1_adds_the_memories_relevant_to_each_new_message(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """chat.message runs the prompt hook with the typed text; the memories relevant to it
    become a synthetic part of the message, once per session."""
    with Memory.open(load_config(start=project)) as memory:
        memory.remember(MEMORY)
        memory.remember("The billing service is owned by Alice.")
        job = HookJob("prompt", project, project)
        prompt_index.write(project, prompt_index.build(memory.writer, job))
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    ask = {"type": "message", "sessionID": "ses_main", "text": "When do deploys go out?"}
    record = load_plugin(plugin, project, [ask, ask])
    inputs = [(r["argv"], r["input"], r["code"]) for r in record["runs"]]
    sent = {"cwd": str(project), "session_id": "ses_main", "prompt": "When do deploys go out?"}
    assert inputs == [(argv("prompt"), sent, 0)] * 2
    first, second = record["messages"]
    added = [p for p in first if p.get("synthetic")]
    assert len(added) == 1 and MEMORY in added[0]["text"] and "Alice" not in added[0]["text"]
    assert added[0]["messageID"] == "msg_user" and added[0]["sessionID"] == "ses_main"
    assert [p["id"] for p in second] == ["prt_user"], "the session was shown it already"


def test_opencode_2_gives_the_compacted_session_the_block_again(
    home: Path, project: Path, capsys: Capsys
) -> None:
    with Memory.open(load_config(start=project)) as memory:
        memory.remember(MEMORY)
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    plugin = project / ".opencode" / "plugins" / "engram.js"
    events = [{"type": "session.compacted", "data": {"sessionID": "ses_main"}}]
    record = load_plugin(plugin, project, events, "v2")
    assert [r["argv"] for r in record["runs"]] == [argv("session-start")]
    [prompt] = record["prompts"]
    assert prompt["sessionID"] == "ses_main" and MEMORY in prompt["text"]
