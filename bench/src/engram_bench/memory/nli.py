"""The write path on labelled NLI pairs: each pair written as A then B through
``Memory.remember`` on a fresh SQLite project, and what became of A.

Outcomes: ``merged`` (B was merged into A's file), ``superseded`` (B made A stale),
``conflicts`` / ``related`` (both live, linked: the link's frontmatter key names it), ``both-kept``
(both live, not linked). Every pair runs once with type ``note`` and once with a structural type
(``decision``), for each extractor asked for.

Pairs fall in a ``dev`` or a ``held-out`` half by a hash of their premise
(``nli_data.half``); each run reports both halves beside the whole, and the judge is tuned on
``dev`` only.

What counts as right: a merge is right on an ``entailment`` pair (B follows from A: the closest
SNLI has to "the same fact"; SNLI's B is mostly a vaguer restatement, so dedup recall against it
is a ceiling, not a target); a supersede is right on a ``contradiction`` pair. The targets of
issue #23 are ≤ 1% of contradiction and of neutral pairs merged, and supersede precision ≥ 0.9
with recall ≥ 0.5 for ``rules``.

"No text lost": after B, A's text must still be on disk, in a live or superseded memory file or,
where the write path keeps revisions (``engram.memories.lifecycle.revisions.revisions_of``), in one
of A's revisions.
"""

from __future__ import annotations

import importlib
import shutil
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from engram.config import EngramConfig
from engram.embedding.cache import CachedEmbedder
from engram.memories.files import memory_files
from engram.memory import Memory
from engram.models import MemoryType
from engram.registry import Registry
from engram.stores.parts import build_part
from engram_bench.memory.nli_data import HALVES, LABELS, Pair, half

TYPE_CLASSES: dict[str, MemoryType] = {"note": "note", "structural": "architecture"}
OUTCOMES = ("merged", "superseded", "conflicts", "related", "both-kept")
Log = Callable[[str], None]


def revisions_reader() -> Callable[[Path], Sequence[str]] | None:
    """``revisions_of(path)`` (the texts of a memory's earlier wordings) where the write path
    keeps revisions, else None: then only the live files are checked."""
    try:
        module = importlib.import_module("engram.memories.lifecycle.revisions")
    except ImportError:
        return None
    reader = getattr(module, "revisions_of", None)
    if not callable(reader):
        return None

    def texts(path: Path) -> list[str]:
        return [r if isinstance(r, str) else str(getattr(r, "content", r)) for r in reader(path)]

    return texts


def frontmatter(path: Path) -> dict[str, Any]:
    text = path.read_text(encoding="utf-8")
    if not text.startswith("---"):
        return {}
    head = text.split("---", 2)[1]
    data = yaml.safe_load(head)
    return data if isinstance(data, dict) else {}


def _linked(meta: dict[str, Any], other: str, word: str) -> bool:
    """Whether a frontmatter key naming ``word`` (conflicts_with, related, …) lists ``other``."""
    for key, value in meta.items():
        if word in key and (value == other or (isinstance(value, list) and other in value)):
            return True
    return False


def write_pair(
    pair: Pair,
    kind: MemoryType,
    folder: Path,
    registry: Registry,
    embedder: CachedEmbedder,
    extractor: tuple[str, dict[str, Any]],
    revisions: Callable[[Path], Sequence[str]] | None,
) -> tuple[str, bool, list[str]]:
    """(outcome, A's text kept, warnings) for one pair written as A then B."""
    if folder.exists():
        shutil.rmtree(folder)
    root = folder / "project"
    root.mkdir(parents=True)
    name, options = extractor
    config = EngramConfig(
        root=root,
        store={"backend": "sqlite", "path": folder / "data"},
        extractor={"provider": name, **options},
        cache={"enabled": False},
        vault={"paths": [root], "respect_gitignore": False},
    )
    store = build_part(config, registry, "store")
    memory = Memory(config, registry, store, embedder, build_part(config, registry, "searcher"))
    try:
        first = memory.remember(pair.first, type=kind)
        second = memory.remember(pair.second, type=kind)
    finally:
        store.close()
        memory.access.close()
        built = memory.writer.built_extractor
        close = getattr(built, "close", None)
        if callable(close):
            close()
    warnings = first.warnings + second.warnings
    kept = _kept(pair.first, root, revisions)
    if second.action == "updated":
        return "merged", kept, warnings
    if first.id in second.superseded:
        return "superseded", kept, warnings
    meta = frontmatter(root / second.path) if (root / second.path).is_file() else {}
    old = frontmatter(root / first.path) if (root / first.path).is_file() else {}
    if _linked(meta, first.id, "conflict") or _linked(old, second.id, "conflict"):
        return "conflicts", kept, warnings
    if _linked(meta, first.id, "related") or _linked(old, second.id, "related"):
        return "related", kept, warnings
    return "both-kept", kept, warnings


def _kept(text: str, root: Path, revisions: Callable[[Path], Sequence[str]] | None) -> bool:
    wanted = " ".join(text.split())
    for path in memory_files(root / "memory"):
        if wanted in " ".join(path.read_text(encoding="utf-8").split()):
            return True
        if revisions is not None and any(wanted in " ".join(r.split()) for r in revisions(path)):
            return True
    return False


def _ratio(part: int, whole: int) -> float | None:
    return part / whole if whole else None


def summarise(outcomes: list[tuple[str, str]]) -> dict[str, Any]:
    """Counts per gold label and the precision / recall of dedup and supersede, from
    (gold label, outcome) pairs."""
    counts = {label: Counter[str]() for label in LABELS}
    for label, outcome in outcomes:
        counts[label][outcome] += 1
    totals = {label: sum(c.values()) for label, c in counts.items()}
    merged = sum(c["merged"] for c in counts.values())
    superseded = sum(c["superseded"] for c in counts.values())
    return {
        "pairs": totals,
        "outcomes": {label: {o: counts[label][o] for o in OUTCOMES} for label in LABELS},
        "merged_share": {label: _ratio(counts[label]["merged"], totals[label]) for label in LABELS},
        "dedup_precision": _ratio(counts["entailment"]["merged"], merged),
        "dedup_recall": _ratio(counts["entailment"]["merged"], totals["entailment"]),
        "supersede_precision": _ratio(counts["contradiction"]["superseded"], superseded),
        "supersede_recall": _ratio(counts["contradiction"]["superseded"], totals["contradiction"]),
    }


def _scores(summary: dict[str, Any]) -> dict[str, Any]:
    """The figures a half is compared by (its pair counts, merged shares, precision, recall)."""
    keys = ("pairs", "merged_share", "supersede_precision", "supersede_recall", "dedup_precision")
    return {k: summary[k] for k in keys} | {"superseded": _superseded(summary)}


def _superseded(summary: dict[str, Any]) -> dict[str, int]:
    return {label: summary["outcomes"][label]["superseded"] for label in LABELS}


def run_nli(
    registry: Registry,
    embedder: CachedEmbedder,
    embedder_name: str,
    extractors: list[tuple[str, dict[str, Any]]],
    pairs: list[Pair],
    workdir: Path,
    log: Log,
) -> list[dict[str, Any]]:
    """One result per (extractor, type class): outcome counts, precision and recall, lost A
    texts (with up to 5 examples of each kind of mistake)."""
    revisions = revisions_reader()
    runs = []
    for extractor in extractors:
        for type_class, kind in TYPE_CLASSES.items():
            started = time.perf_counter()
            log(f"memory: NLI write path, {extractor[0]} / {kind}, {len(pairs)} pairs")
            outcomes: list[tuple[str, str]] = []
            halves: dict[str, list[tuple[str, str]]] = {h: [] for h in HALVES}
            lost: list[str] = []
            examples: dict[str, list[dict[str, str]]] = {}
            warnings: Counter[str] = Counter()
            for done, pair in enumerate(pairs, 1):
                if done % 100 == 0:
                    log(f"memory: {done} of {len(pairs)} pairs written")
                folder = workdir / "nli-pair"
                outcome, kept, said = write_pair(
                    pair, kind, folder, registry, embedder, extractor, revisions
                )
                outcomes.append((pair.label, outcome))
                halves[half(pair.id)].append((pair.label, outcome))
                warnings.update(said)
                if not kept:
                    lost.append(pair.id)
                wrong = (outcome == "merged" and pair.label != "entailment") or (
                    outcome == "superseded" and pair.label != "contradiction"
                )
                if wrong:
                    shown = examples.setdefault(f"{outcome} {pair.label}", [])
                    if len(shown) < 5:
                        shown.append({"id": pair.id, "a": pair.first, "b": pair.second})
            shutil.rmtree(workdir / "nli-pair", ignore_errors=True)
            runs.append(
                {
                    "extractor": extractor[0],
                    "embedder": embedder_name,
                    "type_class": type_class,
                    "type": kind,
                    **summarise(outcomes),
                    "halves": {h: _scores(summarise(done)) for h, done in halves.items()},
                    "a_lost": len(lost),
                    "a_lost_ids": lost[:20],
                    "revisions_checked": revisions is not None,
                    "mistakes": examples,
                    "warnings": dict(warnings.most_common(5)),
                    "seconds": time.perf_counter() - started,
                }
            )
    return runs
