"""The per-prompt hook (Claude Code's ``UserPromptSubmit``, OpenCode's new message): the few
memories relevant to the prompt, within a small token budget and a time budget, none the
session has already been shown.

It runs on every prompt, so it is keyword first and reads files only: the snapshot
``engram.hosts.prompt_index`` keeps (BM25 over its term counts), and the session's list of
what it has seen. No config, pydantic, store, embedder or worker process: a slow store cannot
hold the prompt. A snapshot older than the memory files still answers (files gone since are
dropped) and a detached refresh brings it up to date for the next prompt. The whole answer
runs under a time cap: past it, the prompt goes on with nothing added."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engram.hosts import prompt_index

if TYPE_CHECKING:
    from engram.hosts.job import HookJob

BUDGET_TOKENS = 300  # the most the block may add to a prompt (estimated: 4 characters a token)
LIMIT = 3  # memories at most
RELATIVE_FLOOR = 0.3  # a hit scoring under this share of the best one is left out
TIME_BUDGET = 1.0  # seconds, at most, before the prompt goes on without memories
SEEN_DIR = "seen"  # under the project's .engram folder: one file per session
HEADER = (
    "# Memories relevant to this prompt (engram)\nCite the path in brackets when you rely on one."
)
K1, B = 1.2, 0.75  # BM25's usual constants


def tokens_of(text: str) -> int:
    """A cheap token estimate (no tokenizer is loaded on this path)."""
    return (len(text) + 3) // 4


def answer(job: HookJob, prompt: str, session_id: str | None, budget: float) -> str:
    """The block for ``prompt`` ("" for nothing), given up after ``budget`` seconds."""
    box: list[str] = []
    worker = threading.Thread(
        target=lambda: box.append(_answer(job, prompt, session_id)), daemon=True
    )
    worker.start()
    worker.join(budget)
    return box[0] if box else ""


def _answer(job: HookJob, prompt: str, session_id: str | None) -> str:
    from engram.text.redact import strip_private

    project = job.project
    query = prompt_index.terms(strip_private(prompt))
    snapshot = prompt_index.load(project)
    if snapshot is None or not prompt_index.fresh(snapshot, job):
        prompt_index.spawn_refresh(job)
    if snapshot is None or not query:
        return ""
    seen = load_seen(project, session_id)
    hits = rank(snapshot, query, seen)
    text, shown = block(hits, project)
    if shown:
        remember_seen(project, session_id, shown)
    return text


def rank(snapshot: dict[str, Any], query: list[str], seen: set[str]) -> list[dict[str, Any]]:
    """BM25 over the snapshot, best first; items the session saw are skipped."""
    idf: dict[str, float] = snapshot.get("idf") or {}
    average = float(snapshot.get("average_length") or 1.0) or 1.0
    wanted = [t for t in dict.fromkeys(query) if t in idf]
    scored: list[tuple[float, dict[str, Any]]] = []
    for item in snapshot.get("items") or []:
        tf: dict[str, int] = item.get("tf") or {}
        score = 0.0
        for term in wanted:
            count = tf.get(term)
            if count:
                norm = count + K1 * (1 - B + B * item.get("length", 0) / average)
                score += idf[term] * count * (K1 + 1) / norm
        if score > 0 and not ({item.get("id"), item.get("path")} & seen):
            scored.append((score, item))
    scored.sort(key=lambda pair: -pair[0])
    if not scored:
        return []
    best = scored[0][0]
    return [item for score, item in scored[:LIMIT] if score >= RELATIVE_FLOOR * best]


def block(hits: list[dict[str, Any]], project: Path) -> tuple[str, list[str]]:
    """The hits packed into ``BUDGET_TOKENS`` (a long memory shortened, one that no longer
    exists dropped); the keys of what the block holds."""
    parts = [HEADER]
    keys: list[str] = []
    for number, item in enumerate(hits, 1):
        path = str(item.get("path") or "")
        if not path or not _exists(path, project):
            continue
        head = f"[{number}] {path}\n"
        room = BUDGET_TOKENS - tokens_of("\n\n".join(parts)) - tokens_of(head) - 1
        text = str(item.get("text") or "")
        if room < 16:
            break
        if tokens_of(text) > room:
            text = text[: room * 4 - 2].rsplit(" ", 1)[0] + " …"
        parts.append(head + text)
        keys += [k for k in (item.get("id"), path) if isinstance(k, str)]
    return ("\n\n".join(parts) if keys else ""), keys


def _exists(path: str, project: Path) -> bool:
    candidate = Path(path)
    return (candidate if candidate.is_absolute() else project / candidate).is_file()


def seen_path(project: Path, session_id: str) -> Path:
    name = hashlib.sha256(session_id.encode()).hexdigest()[:24]
    return project / ".engram" / SEEN_DIR / f"{name}.json"


def load_seen(project: Path, session_id: str | None) -> set[str]:
    if not session_id:
        return set()
    try:
        data = json.loads(seen_path(project, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return set()
    return {k for k in data if isinstance(k, str)} if isinstance(data, list) else set()


def remember_seen(project: Path, session_id: str | None, keys: list[str]) -> None:
    """Add ``keys`` to what the session has been shown (memory ids and paths)."""
    if not session_id or not keys:
        return
    path = seen_path(project, session_id)
    known = load_seen(project, session_id)
    merged = sorted(known | set(keys))
    with contextlib.suppress(OSError):  # without it a memory may be shown twice, no more
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f"{path.name}.{os.getpid()}")
        temp.write_text(json.dumps(merged), encoding="utf-8")
        os.replace(temp, path)
