"""The ``judge`` part of the ``memory`` section (issue #36): what the write path decides on facts
about people and things, on data the judge's rules were not written from.

- ``updates``: a public knowledge-update set (memtrust's contradiction cases: an initial fact,
  then a fact that changes it; ``<--data>/memtrust-contradiction``). Each update is written as
  old then new on a fresh project; each control writes a case's new fact after *another* case's
  old fact (another subject), which must stay separate (no merge, supersede or conflict).
- ``locomo``: LoCoMo's observation facts remembered one by one in session order, both speakers
  of a conversation in one project; every supersede and every ``conflicts_with`` link is listed
  with both wordings and the judge's reason, so a reader can judge them.

Conversations fall in a ``dev`` half (even index) and a ``held-out`` half (odd), reported apart.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engram.cache import CachedEmbedder
from engram.config import EngramConfig
from engram.errors import ConfigError
from engram.memory import Memory
from engram.parts import build_part
from engram.registry import Registry
from engram_bench.memory.extraction import load_sessions
from engram_bench.memory.nli import revisions_reader, write_pair
from engram_bench.memory.nli_data import Pair

UPDATES_FILE = Path("memtrust-contradiction") / "contradiction_cases.json"
UPDATE_OUTCOMES = ("merged", "superseded", "conflicts", "related", "both-kept")


def load_updates(data: Path) -> list[Pair]:
    """Updates (label ``update``) and controls (label ``control``) from memtrust's cases."""
    path = data / UPDATES_FILE
    cases = json.loads(path.read_text(encoding="utf-8"))["cases"]
    pairs = [
        Pair(c["case_id"], "update", c["initial_fact"], c["contradicting_fact"]) for c in cases
    ]
    for i, case in enumerate(cases):
        other = cases[(i + 1) % len(cases)]
        pairs.append(
            Pair(f"{case['case_id']}-control", "control", other["initial_fact"],
                 case["contradicting_fact"])
        )  # fmt: skip
    return pairs


def run_updates(
    data: Path, registry: Registry, embedder: CachedEmbedder, workdir: Path
) -> dict[str, Any]:
    """Outcome counts for the updates and the controls, and each update's outcome."""
    path = data / UPDATES_FILE
    if not path.is_file():
        return {"skipped": f"no {path} (see /work/shared/data/memtrust-contradiction/README.md)"}
    counts: dict[str, Counter[str]] = {"update": Counter(), "control": Counter()}
    rows = []
    revisions = revisions_reader()
    for pair in load_updates(data):
        outcome, kept, _ = write_pair(
            pair, "fact", workdir / "updates", registry, embedder, ("rules", {}), revisions
        )
        counts[pair.label][outcome] += 1
        rows.append({"id": pair.id, "label": pair.label, "outcome": outcome, "kept": kept,
                     "old": pair.first, "new": pair.second})  # fmt: skip
    return {
        "source": str(path),
        "counts": {label: {o: c[o] for o in UPDATE_OUTCOMES} for label, c in counts.items()},
        "lost": sum(1 for r in rows if not r["kept"]),
        "rows": rows,
    }


class _Reasons(logging.Handler):
    """The judge's reason for each (new memory's neighbour id, relation), from dedup's log."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.last: dict[str, tuple[str, str]] = {}

    def emit(self, record: logging.LogRecord) -> None:
        if record.msg == "judge: %s is %s: %s" and isinstance(record.args, tuple):
            memory_id, relation, reason = (str(a) for a in record.args)
            self.last[memory_id] = (relation, reason)


@contextmanager
def _reasons() -> Iterator[_Reasons]:
    logger = logging.getLogger("engram.lifecycle.dedup")
    handler, level = _Reasons(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        yield handler
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


def run_locomo(
    data: Path,
    registry: Registry,
    embedder: CachedEmbedder,
    workdir: Path,
    conversations: int | None = None,
    sessions: int | None = None,
) -> dict[str, Any]:
    """Every observation fact of the first ``conversations`` conversations (their first
    ``sessions``) remembered in order; the supersedes and conflicts listed with both wordings
    and the reason."""
    read = load_sessions(data, conversations=conversations, sessions=sessions)
    by_conversation: dict[str, list[str]] = {}
    for session in read:
        key = session.name.split("/")[0]
        by_conversation.setdefault(key, []).extend(fact for _, fact in session.gold)
    halves: dict[str, Counter[str]] = {"dev": Counter(), "held-out": Counter()}
    listed: list[dict[str, str]] = []
    for index, (name, facts) in enumerate(by_conversation.items()):
        half = "dev" if index % 2 == 0 else "held-out"
        for kind, old, new, reason in _replay(facts, registry, embedder, workdir / "locomo"):
            halves[half][kind] += 1
            listed.append({"conversation": name, "half": half, "kind": kind, "old": old,
                           "new": new, "reason": reason})  # fmt: skip
        halves[half]["writes"] += len(facts)
        halves[half]["conversations"] += 1
    return {"halves": {h: dict(c) for h, c in halves.items()}, "listed": listed}


def _replay(
    facts: list[str], registry: Registry, embedder: CachedEmbedder, folder: Path
) -> Iterator[tuple[str, str, str, str]]:
    """(``supersedes`` or ``conflicts``, older text, newer text, reason) for one project."""
    if folder.exists():
        shutil.rmtree(folder)
    root = folder / "project"
    root.mkdir(parents=True)
    config = EngramConfig(
        root=root,
        store={"backend": "sqlite", "path": folder / "data"},
        extractor={"provider": "rules"},
        cache={"enabled": False},
        vault={"paths": [root], "respect_gitignore": False},
    )
    store = build_part(config, registry, "store")
    memory = Memory(config, registry, store, embedder, build_part(config, registry, "searcher"))
    text: dict[str, str] = {}
    try:
        with _reasons() as reasons:
            for fact in facts:
                reasons.last.clear()
                stored = memory.remember(fact, type="fact")
                text.setdefault(stored.id, fact)
                for kind, ids in (
                    ("supersedes", stored.superseded),
                    ("conflicts", stored.linked_conflicts),
                ):
                    for old in ids:
                        why = reasons.last.get(old, ("", "?"))[1]
                        yield kind, text.get(old, old), fact, why
    finally:
        store.close()
        memory.access.close()


def run_judge(
    data: Path,
    registry: Registry,
    embedder: CachedEmbedder,
    workdir: Path,
    conversations: int | None = None,
    sessions: int | None = None,
) -> dict[str, Any]:
    """Both parts (see the module docstring); LoCoMo's is skipped when its data is missing."""
    try:
        locomo = run_locomo(data, registry, embedder, workdir / "judge", conversations, sessions)
    except ConfigError as exc:
        locomo = {"skipped": str(exc)}
    return {"updates": run_updates(data, registry, embedder, workdir / "judge"), "locomo": locomo}


def render_judge(results: dict[str, Any]) -> list[str]:
    """The part's Markdown: the update outcomes, then LoCoMo's counts and every link listed."""
    lines = ["## Memory: the judge on fact updates and LoCoMo's observation facts", ""]
    updates = results.get("updates") or {}
    if updates.get("skipped"):
        lines.append(f"Updates skipped: {updates['skipped']}")
    else:
        header = "| set | " + " | ".join(UPDATE_OUTCOMES) + " |"
        lines += [header, "|" + "---|" * (len(UPDATE_OUTCOMES) + 1)]
        for label, counts in updates["counts"].items():
            cells = " | ".join(str(counts[o]) for o in UPDATE_OUTCOMES)
            lines.append(f"| {label} | {cells} |")
        lines += ["", f"Texts lost: {updates['lost']}.", ""]
        for r in updates["rows"]:
            lines.append(f"- {r['label']} {r['outcome']}: {r['old']} → {r['new']}")
    locomo = results.get("locomo") or {}
    lines.append("")
    if locomo.get("skipped"):
        return [*lines, f"LoCoMo skipped: {locomo['skipped']}"]
    for half, counts in locomo["halves"].items():
        writes = counts.get("writes", 0)
        lines.append(
            f"- {half}: {counts.get('conversations', 0)} conversations, {writes} writes, "
            f"{counts.get('supersedes', 0)} supersedes, {counts.get('conflicts', 0)} conflicts"
        )
    lines.append("")
    lines += [
        f"- {x['kind']} ({x['conversation']}): {x['old']} → {x['new']} — {x['reason']}"
        for x in locomo["listed"]
    ]
    return lines
