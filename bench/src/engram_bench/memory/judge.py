"""The ``judge`` part of the ``memory`` section (issue #36): what the write path decides on facts
about people and things, on data the judge's rules were not written from.

- ``updates``: real knowledge updates from TempLAMA (Dhingra et al., TACL 2022; Wikidata facts
  that changed between two years, in the set's own sentence templates: "Ruud Brood is the head
  coach of NAC Breda." → "… Jan Wouters …"), ``<--data>/templama/updates.jsonl`` made by that
  folder's ``convert.py`` (its ``SOURCE.md`` says where from). Each update is written as old then
  new through ``remember`` on a fresh project; each control writes the same attribute and new
  value of *another* subject after the old fact, which must stay separate (no merge, supersede
  or conflict). TempLAMA's own split is by subject: ``train`` and ``val`` are the ``dev`` half
  (the rules were tuned on it), ``test`` the ``held-out`` half.
- ``locomo``: LoCoMo's observation facts remembered one by one in session order, both speakers
  of a conversation in one project; every supersede and every ``conflicts_with`` link is listed
  with both wordings and the judge's reason, so a reader can judge them. Conversations fall in a
  ``dev`` half (even index) and a ``held-out`` half (odd), reported apart.

Both run with the ``rules`` judge always, and with ``llm``'s whenever the section has an
OpenAI-compatible endpoint (``memory_extractors``), each reported under its name.
"""

from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from engram.config import EngramConfig
from engram.embedding.cache import CachedEmbedder
from engram.errors import ConfigError
from engram.memory import Memory
from engram.registry import Registry
from engram.stores.parts import build_part
from engram_bench.memory.extraction import load_sessions
from engram_bench.memory.nli import revisions_reader, write_pair
from engram_bench.memory.nli_data import Pair

UPDATES_FILE = Path("templama") / "updates.jsonl"
UPDATE_OUTCOMES = ("merged", "superseded", "conflicts", "related", "both-kept")
DEV_SPLITS = frozenset(["train", "val"])  # TempLAMA's own split, by subject


def load_updates(data: Path) -> list[tuple[str, str, Pair]]:
    """(half, relation, pair) for every update (label ``update``: old then new) and its control
    (label ``control``: old then the new value said of another subject)."""
    out: list[tuple[str, str, Pair]] = []
    for line in (data / UPDATES_FILE).read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        half = "dev" if case["source_split"] in DEV_SPLITS else "held-out"
        relation = str(case["relation"])
        out.append((half, relation, Pair(case["id"], "update", case["old"], case["new"])))
        out.append(
            (half, relation, Pair(f"{case['id']}-control", "control", case["old"], case["control"]))
        )
    return out


Extractor = tuple[str, dict[str, Any]]
RULES: Extractor = ("rules", {})


def run_updates(
    data: Path,
    registry: Registry,
    embedder: CachedEmbedder,
    workdir: Path,
    limit: int | None = None,
    extractor: Extractor = RULES,
) -> dict[str, Any]:
    """Outcome counts for the updates and the controls by half and by relation, and the
    updates that were not superseded (with the judge's outcome) for a reader."""
    path = data / UPDATES_FILE
    if not path.is_file():
        return {"skipped": f"no {path} (make it with templama/convert.py; see its SOURCE.md)"}
    counts: dict[str, Counter[str]] = {}
    by_relation: dict[str, Counter[str]] = {}
    rows = []
    lost = 0
    revisions = revisions_reader()
    for half, relation, pair in load_updates(data)[: limit and 2 * limit]:
        outcome, kept, _ = write_pair(
            pair, "fact", workdir / "updates", registry, embedder, extractor, revisions
        )
        counts.setdefault(f"{pair.label} {half}", Counter())[outcome] += 1
        by_relation.setdefault(f"{pair.label} {relation}", Counter())[outcome] += 1
        lost += not kept
        if (pair.label == "control" and outcome != "both-kept") or (
            pair.label == "update" and outcome != "superseded"
        ):
            rows.append({"id": pair.id, "half": half, "label": pair.label, "outcome": outcome,
                         "old": pair.first, "new": pair.second})  # fmt: skip
    return {
        "source": str(path),
        "counts": {k: {o: c[o] for o in UPDATE_OUTCOMES} for k, c in sorted(counts.items())},
        "by_relation": {
            k: {o: c[o] for o in UPDATE_OUTCOMES} for k, c in sorted(by_relation.items())
        },
        "lost": lost,
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
    logger = logging.getLogger("engram.memories.judge.dedup")
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
    extractor: Extractor = RULES,
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
        replayed = _replay(facts, registry, embedder, workdir / "locomo", extractor)
        for kind, old, new, reason in replayed:
            halves[half][kind] += 1
            listed.append({"conversation": name, "half": half, "kind": kind, "old": old,
                           "new": new, "reason": reason})  # fmt: skip
        halves[half]["writes"] += len(facts)
        halves[half]["conversations"] += 1
    return {"halves": {h: dict(c) for h, c in halves.items()}, "listed": listed}


def _replay(
    facts: list[str],
    registry: Registry,
    embedder: CachedEmbedder,
    folder: Path,
    extractor: Extractor = RULES,
) -> Iterator[tuple[str, str, str, str]]:
    """(``supersedes`` or ``conflicts``, older text, newer text, reason) for one project."""
    if folder.exists():
        shutil.rmtree(folder)
    root = folder / "project"
    root.mkdir(parents=True)
    config = EngramConfig(
        root=root,
        store={"backend": "sqlite", "path": folder / "data"},
        extractor={"provider": extractor[0], **extractor[1]},
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
    extractors: Sequence[Extractor] = (RULES,),
) -> dict[str, Any]:
    """Both parts (see the module docstring) with each extractor's judge: the first
    (``rules``) at the top level, every other one (``llm`` when an endpoint is configured)
    under ``others``; LoCoMo's part is skipped when its data is missing."""
    chosen = list(extractors) or [RULES]
    runs = [_run_one(data, registry, embedder, workdir, conversations, sessions, e) for e in chosen]
    others = {extractor[0]: run for extractor, run in zip(chosen[1:], runs[1:], strict=True)}
    return {**runs[0], "extractor": chosen[0][0], "others": others}


def _run_one(
    data: Path,
    registry: Registry,
    embedder: CachedEmbedder,
    workdir: Path,
    conversations: int | None,
    sessions: int | None,
    extractor: Extractor,
) -> dict[str, Any]:
    folder = workdir / "judge" / extractor[0]
    try:
        locomo = run_locomo(data, registry, embedder, folder, conversations, sessions, extractor)
    except ConfigError as exc:
        locomo = {"skipped": str(exc)}
    limit = 20 if conversations else None  # a quick run writes the first 20 updates
    updates = run_updates(data, registry, embedder, folder, limit, extractor)
    return {"updates": updates, "locomo": locomo}


def render_judge(results: dict[str, Any]) -> list[str]:
    """The part's Markdown: for each extractor's judge, the update outcomes, then LoCoMo's
    counts and every link listed."""
    lines = ["## Memory: the judge on fact updates and LoCoMo's observation facts", ""]
    lines += [f"With `{results.get('extractor', 'rules')}`:", "", *_render_one(results)]
    for name, run in (results.get("others") or {}).items():
        lines += ["", f"With `{name}`:", "", *_render_one(run)]
    return lines


def _render_one(results: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    updates = results.get("updates") or {}
    if updates.get("skipped"):
        lines.append(f"Updates skipped: {updates['skipped']}")
    else:
        lines += [f"TempLAMA's fact updates ({updates['source']}):", ""]
        for title, key in (("half", "counts"), ("relation", "by_relation")):
            lines += ["| " + title + " | " + " | ".join(UPDATE_OUTCOMES) + " | share superseded |"]
            lines += ["|" + "---|" * (len(UPDATE_OUTCOMES) + 2)]
            for label, counts in updates[key].items():
                total = sum(counts.values())
                cells = " | ".join(str(counts[o]) for o in UPDATE_OUTCOMES)
                share = counts["superseded"] / total if total else 0.0
                lines.append(f"| {label} | {cells} | {share:.1%} |")
            lines.append("")
        lines += [f"Texts lost: {updates['lost']}.", "", "Not superseded (updates) or not kept "
                  "apart (controls):", ""]  # fmt: skip
        for r in updates["rows"]:
            lines.append(f"- {r['label']} {r['half']} {r['outcome']}: {r['old']} → {r['new']}")
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
