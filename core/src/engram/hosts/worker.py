"""The hook's work, in a child process the runner can abandon when it hangs:
``python -P -m engram.hosts.worker`` reads its job (JSON) on stdin and writes one JSON result on
stdout. Whatever the work itself prints goes to stderr, so the result is all stdout holds."""

from __future__ import annotations

import json
import os
import sys
from typing import TYPE_CHECKING, Any

from engram.errors import EngramError, IndexDamaged
from engram.hosts.job import HookJob

if TYPE_CHECKING:
    from engram.config import EngramConfig

Result = dict[str, Any]


def run_job(job: HookJob) -> Result:
    """session-start → the recall block; capture → re-index the vault's changed notes, index
    this project's sessions, then capture the turns that grew since the last capture."""
    from engram.config import load_config
    from engram.hosts import quiet
    from engram.stores import damage as damage_mark

    if job.event == "session-start":
        quiet.forget(job)  # a stamp stands only for the recall that wrote it
    settings = quiet.settings_digest(job)  # before the config is read: a later edit shows
    config = load_config(job.overrides or None, project_file=job.config_file, start=job.project)
    if job.transcript_root and job.host and job.host not in config.sessions.dirs:
        # The host's own payload tells where its transcripts are (CLAUDE_CONFIG_DIR & co).
        config.sessions.dirs[job.host] = job.transcript_root
    try:
        return _work(job, config, settings)
    except IndexDamaged as exc:
        if exc.files:  # local damage met mid-job: healed (moved aside, rebuilt), done once more
            return _work(job, config, settings, suspect=exc)
        damage_mark.record(config, exc)  # called damaged here: nobody writes it until rebuilt
        raise


def _work(
    job: HookJob, config: EngramConfig, settings: str, suspect: IndexDamaged | None = None
) -> Result:
    from engram.hosts import prompt, prompt_index, quiet
    from engram.memories import recall as recalling
    from engram.memories.scopes import memory_folders
    from engram.memory import Memory

    with Memory.open(config, suspect=suspect) as memory:
        if job.event == "session-start":
            folders = [f.path for f in memory_folders(config)]
            tree = quiet.folders_digest(folders)  # before recall reads them
            recall = recalling.recall(memory.writer, memory.searching, None, pinned=True)
            notes = [*memory.notices, *recall.warnings]
            shown = [k for i in recall.items for k in (i.memory_id, i.path) if k]
            prompt.remember_seen(job.project, job.session_id, shown)
            if notes:  # the shortcut keeps a block, not what else a recall had to say
                quiet.forget(job)
            else:
                pairs = [[i.path, i.memory_id] for i in recall.items if i.memory_id]
                quiet.write(job, settings, folders, tree, quiet.Cached(recall.text, shown, pairs))
            return {"ok": True, "text": recall.text, "notes": notes}
        # The accesses of a block the session-start shortcut served (engram.hosts.quiet).
        memory.writer.access.record(quiet.take_recalled(job.project))
        # First: the per-prompt hook's snapshot, so the session's first prompts can use it.
        prompt_index.refresh_if_stale(memory.writer, job)
        vault = memory.index()
        report = memory.index_sessions()
        captured = memory.capture_sessions()
        notes = [*memory.notices, *vault.warnings, *report.warnings]
        notes += [*(f"capture failed: {f}" for f in captured.failed), *captured.warnings]
        summary = (
            f"notes: {vault.summary()}; sessions: "
            f"{report.summary().replace(' files', ' sessions')}; {captured.summary()}"
        )
        return {"ok": True, "text": "", "notes": notes, "summary": summary}


def describe(exc: BaseException) -> str:
    """An exception as one line: the library's own message, else its type and message."""
    text = str(exc) if isinstance(exc, EngramError) else f"{type(exc).__name__}: {exc}"
    return " ".join(text.split()) or type(exc).__name__


def main() -> int:
    result_fd = os.dup(1)
    os.dup2(2, 1)  # the work's own prints (and a C library's) land on stderr
    try:
        job = HookJob.loads(sys.stdin.read())
        result = run_job(job)
    except BaseException as exc:  # every failure is reported, none escapes
        result = {"ok": False, "error": describe(exc)}
    sys.stdout.flush()
    with os.fdopen(result_fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
