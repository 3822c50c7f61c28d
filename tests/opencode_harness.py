"""Node drives our OpenCode plugin file as OpenCode 1.x and 2.x load and run it: the loaders'
checks ported, each version's plugin context (a fake 1.x ``client``, a fake 2.x ``ctx`` whose
hooks and events the test fires), and the commands the plugin starts run for real."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

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
# `client` records prompts) and its hooks get the events; V2 `setup(ctx)` registers session
# hooks with `ctx.session.hook(name, callback)`, reads the events from `ctx.event.subscribe()`
# and hands context to `ctx.session.synthetic` (recorded). A V2 run's steps are events (handed
# over one at a time, each handled before the next) or `{hook, sessionID, text?}`, which calls
# that hook's callbacks with the event the 2.0.20 plugin reference describes and records its
# `system` after them; after each step the commands it started are waited for, unless the step
# says `settle: false` (those still running at the end are killed). Commands the V2 path starts
# through node:child_process are recorded by wrapping `spawn`.
HARNESS = r"""
import childProcess, { spawnSync } from "node:child_process";
import { syncBuiltinESMExports } from "node:module";
import { pathToFileURL } from "node:url";

const [plugin, directory, events, version] = process.argv.slice(2);
const record = { runs: [], prompts: [], exports: [], loaded: [], messages: [], context: [] };
const pending = [];
const children = [];

const realSpawn = childProcess.spawn;
childProcess.spawn = (command, args, options) => {
  const child = realSpawn(command, args, options);
  children.push(child);
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
  Object.assign(record, { hooks: [], registered: [], disposed: [], killed: 0 });
  const hooks = {};
  // The event stream: the plugin asks for the next event, the harness hands one over and then
  // waits until the plugin asks again, which it does once it has handled the one before.
  let asked;
  let ask = new Promise((resolve) => { asked = resolve; });
  let give;
  const stream = async function* () {
    for (;;) yield await new Promise((resolve) => { give = resolve; asked(); });
  };
  const deliver = async (event) => {
    await ask;
    ask = new Promise((resolve) => { asked = resolve; });
    give(event);
    await ask;
  };
  const session = {
    synthetic: async (request) => { record.prompts.push(request); },
    // `ctx.session.hook(name, callback)` registers; the registration can be disposed.
    hook: async (name, callback) => {
      (hooks[name] ||= []).push(callback);
      record.registered.push(name);
      return { dispose: async () => { record.disposed.push(name); } };
    },
  };
  const ctx = {
    location: { directory },
    event: { subscribe: () => stream() },
    session: version === "v2-bare" ? {} : session, // a build without the session methods
  };
  const cleanup = await definition.setup(ctx);
  record.cleanup = typeof cleanup;
  const model = { providerID: "x", id: "y" };
  // Each hook's event as the 2.0.20 reference gives it (the fields the hook may change too).
  const hookEvent = (step) => step.hook === "prompt"
    ? { sessionID: step.sessionID, messageID: step.messageID || "msg_user",
        prompt: { text: step.text }, metadata: {} }
    : { sessionID: step.sessionID, model, agent: "build", system: [], messages: [], options: {},
        tools: {}, ...(step.hook === "compaction" ? { result: undefined } : {}) };
  const settle = async () => { while (pending.length) await pending.shift().catch(() => {}); };
  for (const step of JSON.parse(events)) {
    if (step.hook) {
      const event = hookEvent(step);
      let threw = null;
      for (const callback of hooks[step.hook] || []) {
        try { await callback(event); } catch (error) { threw = String(error); }
      }
      // `running`: the commands still running when the hook returned.
      const running = record.runs.filter((run) => run.code === null).length;
      record.hooks.push({ name: step.hook, sessionID: step.sessionID, system: event.system ?? null,
                          threw, running });
    } else {
      await deliver(step);
    }
    if (step.settle !== false) await settle();
  }
  for (const child of children) {  // what a test left running (a hung command) is stopped
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      record.killed += 1;
    }
  }
  await settle();
  if (typeof cleanup === "function") await cleanup();
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
    """Load ``plugin`` under node as OpenCode ``version`` (v1 / v2; v2-bare: a 2.x context
    without ``session`` methods) would, fire ``events``; what it did. A loader that rejects the
    file fails the run."""
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
