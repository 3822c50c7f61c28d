"""``engram hooks install|uninstall opencode``: our plugin file in OpenCode's documented plugin
folder (``~/.config/opencode/plugins/``, ``.opencode/plugins/``), checked by node and then loaded
by node (``opencode_harness``) as OpenCode 1.x runs it (a ``$`` that really runs the command, a
fake ``client``) and as OpenCode 2.x does (a fake ``ctx`` whose session hooks and events the test
fires): recall at session start, the memories relevant to each prompt, capture when a session
is done and before a compaction, and the recall block carried through the compaction."""

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
from engram.hosts.prompt import TIME_BUDGET
from engram.memory import Memory
from opencode_harness import HARNESS, load_plugin, node
from support import cli

ENGRAM = str(Path(sys.executable).parent / "engram")
MEMORY = "Deploys go out on Tuesdays after the change review."
Capsys = pytest.CaptureFixture[str]


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
    assert f"const PROMPT = {json.dumps(argv('prompt'))};" in text
    wait = round((TIME_BUDGET + opencode.PROMPT_START) * 1000)  # the lookup's cap and its start
    assert f"const PROMPT_WAIT_MS = {wait};" in text
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


def remember(project: Path, *texts: str, index: bool = False) -> None:
    """``texts`` as memories of ``project``; ``index``: the prompt hook's snapshot of them too."""
    with Memory.open(load_config(start=project)) as memory:
        for text in texts:
            memory.remember(text)
        if index:
            job = HookJob("prompt", project, project)
            prompt_index.write(project, prompt_index.build(memory.writer, job))


def installed(project: Path, capsys: Capsys) -> Path:
    assert cli(capsys, "hooks", "install", "opencode", "--scope", "project")[0] == 0
    return project / ".opencode" / "plugins" / "engram.js"


def v2_event(kind: str, session: str, **data: str) -> dict[str, Any]:
    """An OpenCode 2 event: its payload in ``data``."""
    return {"type": kind, "data": {"sessionID": session, **data}}


def hook(name: str, session: str, **extra: Any) -> dict[str, Any]:
    """A step that runs the plugin's ``ctx.session.hook(name)`` callbacks for ``session``."""
    return {"hook": name, "sessionID": session, **extra}


def test_opencode_2_session_events_recall_and_capture(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """``session.created`` hands the recall block over without starting the model loop; each
    busy period's outcome (``session.execution.*``, or ``session.idle`` of older builds) runs
    session-end, one at a time; a sub-agent's session gets neither."""
    remember(project, MEMORY)
    events = [
        v2_event("session.created", "ses_main"),
        v2_event("session.created", "ses_sub", parentID="ses_main"),
        v2_event("session.execution.succeeded", "ses_sub"),
        v2_event("session.execution.succeeded", "ses_main"),
        # Two outcomes while the first capture still runs: one capture.
        {**v2_event("session.execution.failed", "ses_main"), "settle": False},
        v2_event("session.execution.interrupted", "ses_main", reason="user"),
        v2_event("session.idle", "ses_main"),
    ]
    record = load_plugin(installed(project, capsys), project, events, "v2")
    assert record["loaded"] == ["v2"] and record["cleanup"] == "function"
    runs = [(r["argv"], r["cwd"], r["input"], r["code"]) for r in record["runs"]]
    ended = (argv("session-end"), str(project), {"cwd": str(project)}, 0)
    started = {"cwd": str(project), "session_id": "ses_main"}
    assert runs == [(argv("session-start"), str(project), started, 0), ended, ended, ended]
    [given] = record["prompts"]
    assert given["sessionID"] == "ses_main" and given["resume"] is False
    assert given["text"].startswith("# Relevant memories (engram)") and MEMORY in given["text"]
    assert record["registered"] == ["prompt", "context", "compaction"]
    assert sorted(record["disposed"]) == sorted(record["registered"]), "the cleanup disposes"


def test_opencode_2_adds_the_memories_relevant_to_each_prompt_to_its_requests(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """The prompt hook starts the lookup and returns while it runs; every model request of
    the turn gets what it found as a system part; the same prompt again finds nothing new (the
    session was shown it); a sub-agent's session and a session with no prompt get nothing."""
    remember(project, MEMORY, "The billing service is owned by Alice.", index=True)
    ask = "When do deploys go out?"
    steps = [
        v2_event("session.created", "ses_sub", parentID="ses_main"),
        hook("prompt", "ses_sub", text=ask),
        hook("context", "ses_sub"),
        hook("prompt", "ses_main", text=ask),
        hook("context", "ses_main"),
        hook("context", "ses_main"),  # the request after a tool call, in the same turn
        hook("context", "ses_other"),
        hook("prompt", "ses_main", text=ask),
        hook("context", "ses_main"),
    ]
    record = load_plugin(installed(project, capsys), project, steps, "v2")
    sent = {"cwd": str(project), "session_id": "ses_main", "prompt": ask}
    assert [(r["argv"], r["input"], r["code"]) for r in record["runs"]] == [
        (argv("prompt"), sent, 0)
    ] * 2
    hooks = record["hooks"]
    assert [h["threw"] for h in hooks] == [None] * len(steps[1:])
    sub_prompt, sub_context, first, turn, again, other, second, after = hooks
    assert sub_prompt["running"] == 0 and sub_context["system"] == []
    assert first["running"] == 1, "the prompt hook does not wait for the lookup"
    [part] = turn["system"]
    assert part["type"] == "text" and MEMORY in part["text"] and "Alice" not in part["text"]
    assert part["text"].startswith("# Memories relevant to this prompt (engram)")
    assert again["system"] == [part], "every request of the turn carries it"
    assert other["system"] == []
    assert second["running"] == 1 and after["system"] == [], "the session was shown it already"
    assert record["prompts"] == []


def test_opencode_2_a_prompt_with_nothing_relevant_adds_nothing(
    home: Path, project: Path, capsys: Capsys
) -> None:
    remember(project, MEMORY, index=True)
    steps = [hook("prompt", "ses_main", text="Which font does the logo use?")]
    steps.append(hook("context", "ses_main"))
    record = load_plugin(installed(project, capsys), project, steps, "v2")
    assert [(r["argv"], r["code"]) for r in record["runs"]] == [(argv("prompt"), 0)]
    assert [h["system"] for h in record["hooks"]] == [None, []]


def test_opencode_2_compaction_captures_then_carries_the_block(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """The compaction hook captures first, then pushes the recall block into the summary
    request; after ``session.compaction.ended`` the session gets the block again, without the
    model loop starting."""
    remember(project, MEMORY)
    steps = [
        v2_event("session.compaction.started", "ses_main", reason="auto", recent="0"),
        hook("compaction", "ses_main"),
        v2_event("session.compaction.ended", "ses_main", reason="auto", text="summary"),
    ]
    record = load_plugin(installed(project, capsys), project, steps, "v2")
    session = {"cwd": str(project), "session_id": "ses_main"}
    assert [(r["argv"], r["input"], r["code"]) for r in record["runs"]] == [
        (argv("pre-compact"), {"cwd": str(project)}, 0),
        (argv("session-start"), session, 0),
        (argv("session-start"), session, 0),
    ]
    [compaction] = record["hooks"]
    [part] = compaction["system"]
    assert compaction["threw"] is None and part["type"] == "text"
    assert part["text"].startswith("# Relevant memories (engram)") and MEMORY in part["text"]
    [given] = record["prompts"]
    assert given == {"sessionID": "ses_main", "text": part["text"], "resume": False}


def test_opencode_2_a_missing_engram_adds_nothing_and_throws_nothing(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """An engram that is gone (uninstalled after ``install``): every hook returns without a
    throw and adds nothing; OpenCode goes on."""
    gone = str(tmp_path / "gone" / "engram")
    plugin = project / ".opencode" / "plugins" / "engram.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(opencode.render([gone]), encoding="utf-8")
    steps = [
        v2_event("session.created", "ses_main"),
        hook("prompt", "ses_main", text="When do deploys go out?"),
        hook("context", "ses_main"),
        hook("compaction", "ses_main"),
        v2_event("session.compaction.ended", "ses_main"),
        v2_event("session.execution.succeeded", "ses_main"),
    ]
    record = load_plugin(plugin, project, steps, "v2")
    events = ["session-start", "prompt", "pre-compact", "session-start", "session-start"]
    assert [r["argv"][:4] for r in record["runs"]] == [
        [gone, "hooks", "run", event] for event in [*events, "session-end"]
    ]
    assert {r["code"] for r in record["runs"]} == {-2}  # ENOENT: nothing started
    assert [(h["name"], h["threw"], h["system"]) for h in record["hooks"]] == [
        ("prompt", None, None),
        ("context", None, []),
        ("compaction", None, []),
    ]
    assert record["prompts"] == []


def test_opencode_2_a_hung_engram_holds_a_request_only_within_the_budget(
    home: Path, project: Path, tmp_path: Path
) -> None:
    """A lookup that never answers: the model request goes on without memories (after the
    plugin's wait, ``PROMPT_WAIT_MS``) while the command still runs."""
    hung = tmp_path / "hung-engram"
    hung.write_text("#!/bin/sh\nexec sleep 600\n", encoding="utf-8")
    hung.chmod(0o755)
    plugin = project / ".opencode" / "plugins" / "engram.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text(opencode.render([str(hung)]), encoding="utf-8")
    steps = [
        hook("prompt", "ses_main", text="When do deploys go out?", settle=False),
        hook("context", "ses_main", settle=False),
    ]
    record = load_plugin(plugin, project, steps, "v2")
    prompt, context = record["hooks"]
    assert (prompt["running"], context["running"]) == (1, 1)
    assert context["system"] == [] and context["threw"] is None
    assert record["killed"] == 1


def test_opencode_2_without_session_methods_still_captures(
    home: Path, project: Path, capsys: Capsys
) -> None:
    """A 2.x context without ``session.hook`` or ``session.synthetic``: setup registers
    nothing, throws nothing, and the session events still capture."""
    remember(project, MEMORY)
    steps = [v2_event("session.created", "ses_main"), hook("context", "ses_main")]
    steps.append(v2_event("session.execution.succeeded", "ses_main"))
    record = load_plugin(installed(project, capsys), project, steps, "v2-bare")
    assert record["cleanup"] == "function" and record["registered"] == []
    assert [(r["argv"], r["code"]) for r in record["runs"]] == [
        (argv("session-start"), 0),
        (argv("session-end"), 0),
    ]
    assert record["prompts"] == [] and record["hooks"][0]["system"] == []
