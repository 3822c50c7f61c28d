"""OpenCode's install: a plugin file of ours, ``engram.js``, in its plugin folder
(``~/.config/opencode/plugins/`` for the user, ``.opencode/plugins/`` in a project), loaded at
startup. Its default export is ``{ id, server, setup }``: OpenCode 1.x loads ``{ id, server }``
(``server`` is the plugin function), OpenCode 2.0 replaced the plugin API and requires
``{ id, setup }`` (or ``{ id, effect }``), dropping anything else with
``PluginModule.LoadError``.

1.x: the ``event`` handler runs ``engram hooks run session-start`` on ``session.created`` and
hands the block to the session as context (``client.session.prompt`` with ``noReply``), runs
``session-end`` on ``session.idle`` and ``pre-compact`` from the
``experimental.session.compacting`` hook, which then puts the recall block into the compaction's
``output.context`` (so the summary carries it); its ``chat.message`` hook runs ``prompt`` with
each new user message and adds the memories relevant to it as a synthetic text part.

2.x, after the plugin API of OpenCode 2.0.20 (``packages/plugin/src/promise/session.ts``,
``packages/schema/src/event-manifest.ts``): ``ctx.session.hook("prompt")`` (before a user
prompt is admitted; ``event.prompt.text``) starts ``prompt`` without waiting for it, and
``ctx.session.hook("context")`` (before each model request of the session) pushes what it found
into ``event.system``, waiting for a lookup still running no longer than the lookup's own cap
plus the command's start (``PROMPT_WAIT_MS``). ``ctx.session.hook("compaction")`` runs
``pre-compact`` and pushes the recall block into the summary request's ``event.system``; after
``session.compaction.ended`` the session gets the block again through
``ctx.session.synthetic`` with ``resume: false`` (context without starting the model loop), as
after ``session.created``. ``session.execution.succeeded|failed|interrupted`` (one per busy
period) run ``session-end``, and so does ``session.idle``, which only builds before 2.0.18 emit.
Sub-agent sessions (``session.created`` with a ``parentID``) are left alone. Every hook catches
its own failures: a throw in ``prompt`` would refuse the user's prompt.

Not run against a real 2.x: no 2.x is installable here (npm's ``@opencode-ai/plugin`` 1.18.33
has only a preview v2 API without ``session``); the tests drive the rendered file under node
with a context shaped as the 2.0.20 reference describes.

Documented at https://opencode.ai/docs/plugins (plugin folders, the ``event`` hook, ``$``) and
https://opencode.ai/docs/sdk (``session.prompt``: ``noReply: true`` adds context only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engram.errors import ConfigError
from engram.hosts.command import run_argv
from engram.hosts.files import Change, read_text
from engram.hosts.prompt import TIME_BUDGET

# The host's name in the hook command lines: ``engram.hosts.opencode.HOST`` (not imported:
# that module imports this one; the host suite checks the lines name the host).
HOST = "opencode"
FILE_NAME = "engram.js"
MARKER = "// engram-hooks: written by `engram hooks install opencode`"
# Seconds a 2.x model request may wait, besides the lookup's own cap (``prompt.TIME_BUDGET``),
# for the ``prompt`` command to start (about 0.15 s on an idle machine; a loaded one is slower).
PROMPT_START = 1.0

TEMPLATE = """\
{marker}
// engram's memory for OpenCode: recall at session start, the memories relevant to each new
// prompt, index and capture when a session is idle and before OpenCode compacts it.
// `engram hooks uninstall opencode` removes this file; `install` rewrites it.
// Events: https://opencode.ai/docs/plugins
// One default export that both plugin loaders accept: OpenCode 1.x reads `{{ id, server }}`
// (server: the V1 plugin function), OpenCode 2.x reads `{{ id, setup }}`.
import {{ spawn }} from "node:child_process";

const START = {start};
const END = {end};
const COMPACT = {compact};
const PROMPT = {prompt};
// How long a model request waits for its prompt's memories (2.x): the lookup's own cap and
// the command's start.
const PROMPT_WAIT_MS = {prompt_wait};

// The text a user typed into a message (their parts; not ones a plugin added).
const typed = (parts) =>
  (Array.isArray(parts) ? parts : [])
    .filter((part) => part && part.type === "text" && !part.synthetic && part.text)
    .map((part) => part.text)
    .join("\\n");

// V1: runs engram through Bun's `$` with the session's folder; stdout is the block (empty when
// there is none or memory is unavailable: the runner exits 0 and explains on stderr).
const run = async ($, argv, directory, extra = {{}}) => {{
  const payload = new Response(JSON.stringify({{ cwd: directory, ...extra }}));
  const result = await $`${{argv}} < ${{payload}}`.cwd(directory).quiet().nothrow();
  return result.stdout.toString().trim();
}};

// V2 has no `$` in its context: the same command through node:child_process. Never rejects: a
// missing binary or a command that exits before reading its input gives "".
const spawnRun = (argv, directory, extra = {{}}) =>
  new Promise((resolve) => {{
    let out = "";
    let child;
    try {{
      const stdio = ["pipe", "pipe", "ignore"];
      child = spawn(argv[0], argv.slice(1), {{ cwd: directory, stdio }});
    }} catch (error) {{
      resolve("");
      return;
    }}
    child.stdout.on("data", (chunk) => {{
      out += chunk;
    }});
    child.stdin.on("error", () => {{}});
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(out.trim()));
    child.stdin.end(JSON.stringify({{ cwd: directory, ...extra }}));
  }});

// A lookup's answer if it comes within `ms`, else "" (the lookup goes on: a later request of the
// same turn takes its answer).
const within = (lookup, ms) =>
  new Promise((resolve) => {{
    const timer = setTimeout(() => resolve(""), ms);
    const settle = (text) => {{
      clearTimeout(timer);
      resolve(typeof text === "string" ? text : "");
    }};
    lookup.then(settle, () => settle(""));
  }});

// OpenCode 1.x: the plugin function; its hooks run engram on the session events.
const server = async ({{ client, $, directory }}) => {{
  let ending = null;
  return {{
    event: async ({{ event }}) => {{
      try {{
        if (event.type === "session.created") {{
          const info = (event.properties && event.properties.info) || {{}};
          if (!info.id || info.parentID) return; // sub-agent sessions start without it
          const text = await run($, START, info.directory || directory);
          if (!text) return;
          await client.session.prompt({{
            path: {{ id: info.id }},
            body: {{ noReply: true, parts: [{{ type: "text", text, synthetic: true }}] }},
          }});
        }} else if (event.type === "session.idle" && ending === null) {{
          // Not awaited: indexing must not hold up the host's other event handlers.
          ending = run($, END, directory)
            .catch(() => "")
            .finally(() => {{
              ending = null;
            }});
        }}
      }} catch (error) {{
        // Memory is a helper: a failure here must never break the session.
      }}
    }},
    // Each new user message: the few memories relevant to it, as a synthetic part of it.
    "chat.message": async (input, output) => {{
      try {{
        const prompt = typed(output && output.parts);
        if (!prompt || !input || !input.sessionID) return;
        const text = await run($, PROMPT, directory, {{ session_id: input.sessionID, prompt }});
        if (!text) return;
        output.parts.push({{
          id: `prt_engram_${{Date.now().toString(36)}}`,
          sessionID: input.sessionID,
          messageID: output.message && output.message.id,
          type: "text",
          text,
          synthetic: true,
        }});
      }} catch (error) {{
        // never break the message
      }}
    }},
    // Before OpenCode compacts a session: capture it first (returns at once, runs detached),
    // then hand the recall block to the compaction, so the summary carries it.
    "experimental.session.compacting": async (input, output) => {{
      try {{
        await run($, COMPACT, directory);
        const session = (input && input.sessionID) || undefined;
        const text = await run($, START, directory, {{ session_id: session }});
        if (text && output && Array.isArray(output.context)) output.context.push(text);
      }} catch (error) {{
        // never break the compaction
      }}
    }},
  }};
}};

// OpenCode 2.x (the plugin API of 2.0.20): session hooks for each prompt, each model request and
// the compaction; the session events from `ctx.event`. Returns the cleanup.
const ENDS = [
  "session.execution.succeeded",
  "session.execution.failed",
  "session.execution.interrupted",
  "session.idle", // older 2.0 builds; 2.0.18 on emit the execution outcomes instead
];

async function setup(ctx) {{
  if (!ctx) return undefined;
  const directory = (ctx.location && ctx.location.directory) || process.cwd();
  const session = ctx.session || {{}};
  const controller = new AbortController();
  const registrations = [];
  const subagents = new Set(); // sessions with a parentID: they get no memory of their own
  const found = new Map(); // session -> the lookup for its latest prompt (a promise of the block)
  let ending = null;

  // Context for a session without starting the model loop (`resume: false`).
  const give = async (sessionID, text) => {{
    if (!text || typeof session.synthetic !== "function") return;
    await session.synthetic({{ sessionID, text, resume: false }});
  }};
  // A session hook that never throws into OpenCode (a throw in `prompt` refuses the prompt,
  // elsewhere it fails the request); a build without the method or the hook gets none.
  const hook = async (name, callback) => {{
    try {{
      if (typeof session.hook !== "function") return;
      const guarded = async (event) => {{
        try {{
          await callback(event || {{}});
        }} catch (error) {{
          // memory never breaks a turn
        }}
      }};
      registrations.push(await session.hook(name, guarded));
    }} catch (error) {{
      // an older 2.0 without this hook
    }}
  }};

  // Each new user prompt: the lookup starts at admission and is not waited for there.
  await hook("prompt", (event) => {{
    const id = event.sessionID;
    const text = event.prompt && event.prompt.text;
    if (!id || subagents.has(id) || typeof text !== "string" || !text.trim()) return;
    found.set(id, spawnRun(PROMPT, directory, {{ session_id: id, prompt: text }}));
  }});
  // Each model request of the session: the memories found for its latest prompt, as a system
  // part; a lookup still running is waited for within the prompt's own budget.
  await hook("context", async (event) => {{
    const lookup = found.get(event.sessionID);
    if (!lookup || !Array.isArray(event.system)) return;
    const text = await within(lookup, PROMPT_WAIT_MS);
    if (text) event.system.push({{ type: "text", text }});
  }});
  // Before the summary request: capture first (returns at once, runs detached), then the
  // recall block goes into the summary request, so the summary carries it.
  await hook("compaction", async (event) => {{
    await spawnRun(COMPACT, directory);
    const text = await spawnRun(START, directory, {{ session_id: event.sessionID }});
    if (text && Array.isArray(event.system)) event.system.push({{ type: "text", text }});
  }});

  const end = () => {{
    if (ending !== null) return;
    // Not awaited: indexing must not hold up the next events; one capture at a time.
    ending = spawnRun(END, directory).finally(() => {{
      ending = null;
    }});
  }};
  const follow = async () => {{
    for await (const event of ctx.event.subscribe({{ signal: controller.signal }})) {{
      try {{
        const data = (event && event.data) || {{}};
        const id = data.sessionID;
        if (event.type === "session.created" && id) {{
          if (data.parentID) subagents.add(id);
          else await give(id, await spawnRun(START, directory, {{ session_id: id }}));
        }} else if (ENDS.includes(event.type) && !subagents.has(id)) {{
          end();
        }} else if (event.type === "session.compaction.ended" && id && !subagents.has(id)) {{
          // The compacted session goes on from the summary: give it the recall block again.
          await give(id, await spawnRun(START, directory, {{ session_id: id }}));
        }} else if (event.type === "session.deleted") {{
          found.delete(id);
          subagents.delete(id);
        }}
      }} catch (error) {{
        // memory never breaks a session
      }}
    }}
  }};
  if (ctx.event && typeof ctx.event.subscribe === "function") {{
    // The stream ends with the server (or the cleanup); memory never breaks a session.
    follow().catch(() => {{}});
  }}
  return () => {{
    controller.abort();
    for (const registration of registrations) {{
      try {{
        if (registration && typeof registration.dispose === "function") {{
          Promise.resolve(registration.dispose()).catch(() => {{}});
        }}
      }} catch (error) {{
        // already gone
      }}
    }}
  }};
}}

export default {{ id: "engram", server, setup }};
"""


def plugin_dir(scope: str, project_dir: Path) -> Path:
    """OpenCode's plugin folder: XDG config home (as OpenCode reads it) or the project's."""
    if scope == "project":
        return project_dir / ".opencode" / "plugins"
    config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(config_home) / "opencode" / "plugins"


def render(base: list[str], config: Path | None = None) -> str:
    start = run_argv("session-start", HOST, base=base, config=config)
    end = run_argv("session-end", HOST, base=base, config=config)
    compact = run_argv("pre-compact", HOST, base=base, config=config)
    prompt = run_argv("prompt", HOST, base=base, config=config)
    return TEMPLATE.format(
        marker=MARKER,
        start=json.dumps(start),
        end=json.dumps(end),
        compact=json.dumps(compact),
        prompt=json.dumps(prompt),
        prompt_wait=round((TIME_BUDGET + PROMPT_START) * 1000),
    )


def plan_install(folder: Path, base: list[str], config: Path | None = None) -> Change:
    path = folder / FILE_NAME
    old = _ours_or_none(path)
    return Change(path, old, render(base, config))


def plan_uninstall(folder: Path) -> Change:
    path = folder / FILE_NAME
    return Change(path, _ours_or_none(path), None)


def installed_in(folder: Path) -> bool:
    """Whether our plugin file is in this very project's plugin folder."""
    try:
        return _ours_or_none(plugin_dir("project", folder) / FILE_NAME) is not None
    except ConfigError:
        return False


def _ours_or_none(path: Path) -> str | None:
    """The file's text when we wrote it, None when there is none; someone else's is an error."""
    text = read_text(path)
    if text is not None and not text.startswith(MARKER):
        raise ConfigError(
            f"{path} exists and was not written by engram; move it away (or rename it), then "
            "try again: nothing was written"
        )
    return text
