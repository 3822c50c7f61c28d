"""OpenCode's install: a plugin file of ours, ``engram.js``, in its plugin folder
(``~/.config/opencode/plugins/`` for the user, ``.opencode/plugins/`` in a project), loaded at
startup. Its ``event`` handler runs ``engram hooks run session-start`` on ``session.created`` and
hands the block to the session as context (``client.session.prompt`` with ``noReply``), runs
``session-end`` on ``session.idle`` and ``pre-compact`` from the
``experimental.session.compacting`` hook, which then puts the recall block into the compaction's
``output.context`` (so the summary carries it); its ``chat.message`` hook runs ``prompt`` with
each new user message and adds the memories relevant to it as a synthetic text part.

Its default export is ``{ id, server, setup }``: OpenCode 1.x loads ``{ id, server }``
(``server`` is the plugin function), OpenCode 2.0 replaced the plugin API and requires
``{ id, setup }`` (or ``{ id, effect }``), dropping anything else with
``PluginModule.LoadError``; ``setup`` follows the same events through ``ctx.event``, and after
``session.compacted`` hands the recall block to the compacted session again.

Not wired yet, 2.x per-message memories (what was found, 2026-11-29, not verified against a
running 2.x): the 2.x replacement of 1.x's ``experimental.chat.*.transform`` hooks is
``await ctx.session.hook("context", (event) => event.system.push({ type: "text", text }))``,
run before every model request (plugins seen using it against 2.0.14: graphify's staleness
plugin, opencode-codex-memory, the mumme-it caveman plugin; the migration guide is
https://opencode.ai/v2/docs/build/plugins/migrate-v1). One plugin reports a
``ctx.session.hook("prompt")`` event carrying ``prompt.text``; others read the latest user
prompt out of the context event's request messages. Which field holds the new prompt's text
is not settled by any source found, so ``setup`` does not run ``prompt`` per message yet.

Documented at https://opencode.ai/docs/plugins (plugin folders, the ``event`` hook, ``$``) and
https://opencode.ai/docs/sdk (``session.prompt``: ``noReply: true`` adds context only)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from engram.errors import ConfigError
from engram.hosts.command import run_argv
from engram.hosts.files import Change, read_text

# The host's name in the hook command lines: ``engram.hosts.opencode.HOST`` (not imported:
# that module imports this one; the host suite checks the lines name the host).
HOST = "opencode"
FILE_NAME = "engram.js"
MARKER = "// engram-hooks: written by `engram hooks install opencode`"

TEMPLATE = """\
{marker}
// engram's memory for OpenCode: recall at session start, index and capture when a session is
// idle and before OpenCode compacts it. `engram hooks uninstall opencode` removes this file;
// `install` rewrites it. Events: https://opencode.ai/docs/plugins
// One default export that both plugin loaders accept: OpenCode 1.x reads `{{ id, server }}`
// (server: the V1 plugin function), OpenCode 2.x reads `{{ id, setup }}`.
import {{ spawn }} from "node:child_process";

const START = {start};
const END = {end};
const COMPACT = {compact};
const PROMPT = {prompt};

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

// V2 has no `$` in its context: the same command through node:child_process.
const spawnRun = (argv, directory) =>
  new Promise((resolve) => {{
    let out = "";
    const child = spawn(argv[0], argv.slice(1), {{
      cwd: directory,
      stdio: ["pipe", "pipe", "ignore"],
    }});
    child.stdout.on("data", (chunk) => {{
      out += chunk;
    }});
    child.on("error", () => resolve(""));
    child.on("close", () => resolve(out.trim()));
    child.stdin.end(JSON.stringify({{ cwd: directory }}));
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

// OpenCode 2.x: setup(ctx) follows the session events; returns the cleanup.
async function setup(ctx) {{
  if (!ctx || !ctx.event || typeof ctx.event.subscribe !== "function") return undefined;
  const directory = (ctx.location && ctx.location.directory) || process.cwd();
  const controller = new AbortController();
  let ending = null;
  (async () => {{
    try {{
      for await (const event of ctx.event.subscribe({{ signal: controller.signal }})) {{
        const data = (event && event.data) || {{}};
        if (event.type === "session.created" && data.sessionID && !data.parentID) {{
          const text = await spawnRun(START, directory);
          if (text && ctx.session && typeof ctx.session.synthetic === "function") {{
            await ctx.session.synthetic({{ sessionID: data.sessionID, text }});
          }}
        }} else if (event.type === "session.idle" && ending === null) {{
          ending = spawnRun(END, directory).finally(() => {{
            ending = null;
          }});
        }} else if (event.type === "session.compacting") {{
          await spawnRun(COMPACT, directory);
        }} else if (event.type === "session.compacted" && data.sessionID) {{
          // The compacted session starts from a summary: give it the recall block again.
          const text = await spawnRun(START, directory);
          if (text && ctx.session && typeof ctx.session.synthetic === "function") {{
            await ctx.session.synthetic({{ sessionID: data.sessionID, text }});
          }}
        }}
      }}
    }} catch (error) {{
      // The stream ends with the server; memory never breaks a session.
    }}
  }})();
  return () => controller.abort();
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
