"""The NLI pairs of the ``memory`` section: a seeded sample of SNLI 1.0 (CC BY-SA 4.0), several
hundred pairs per gold label, committed under bench/data/snli/ (see its README for the source).

The data step re-creates the sample from a full SNLI file when a user has one::

    python -m engram_bench.memory.nli_data snli_1.0_test.jsonl bench/data/snli/pairs.jsonl

Pairs without a gold label (``-``: the annotators disagreed) are left out.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from engram.errors import ConfigError

LABELS = ("entailment", "neutral", "contradiction")
PER_LABEL = 300
SEED = 23
DEFAULT_PAIRS = Path(__file__).resolve().parents[3] / "data" / "snli" / "pairs.jsonl"
HALVES = ("dev", "held-out")
_PAIR_TAIL = re.compile(r"r\d+[a-z]$")


@dataclass(frozen=True, slots=True)
class Pair:
    """One labelled pair: ``first`` is written, then ``second``."""

    id: str
    label: str
    first: str
    second: str


def half(pair_id: str) -> str:
    """``dev`` or ``held-out``, fixed by a hash of the pair's premise (SNLI's ``pairID`` less its
    ``rNx`` tail, so pairs sharing a premise fall in one half): the judge's rules are tuned on
    the dev half only, and what is claimed is the held-out half's figure (not tuned on)."""
    premise = _PAIR_TAIL.sub("", pair_id)
    digest = hashlib.sha256(premise.encode("utf-8")).digest()
    return HALVES[digest[0] % 2]


def sample(
    rows: Iterable[dict[str, object]], per_label: int = PER_LABEL, seed: int = SEED
) -> list[Pair]:
    """``per_label`` pairs of each gold label, drawn with ``seed``, in a seeded order."""
    by_label: dict[str, list[Pair]] = {label: [] for label in LABELS}
    for row in rows:
        label = str(row.get("gold_label", ""))
        if label in by_label:
            by_label[label].append(
                Pair(str(row["pairID"]), label, str(row["sentence1"]), str(row["sentence2"]))
            )
    rng = random.Random(seed)
    chosen: list[Pair] = []
    for label in LABELS:
        pool = sorted(by_label[label], key=lambda p: p.id)
        chosen += rng.sample(pool, min(per_label, len(pool)))
    rng.shuffle(chosen)
    return chosen


def load_pairs(path: Path | None = None, per_label: int | None = None) -> list[Pair]:
    """The committed sample (or ``path``), at most ``per_label`` pairs of each label."""
    source = path or DEFAULT_PAIRS
    if not source.is_file():
        raise ConfigError(
            f"the NLI pairs file {source} is missing; re-create it with "
            "`python -m engram_bench.memory.nli_data SNLI_FILE OUT` (bench/data/snli/README.md)"
        )
    pairs = []
    seen: dict[str, int] = {}
    for line in source.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        pair = Pair(row["id"], row["label"], row["first"], row["second"])
        if per_label is not None and seen.get(pair.label, 0) >= per_label:
            continue
        seen[pair.label] = seen.get(pair.label, 0) + 1
        pairs.append(pair)
    return pairs


def write_pairs(pairs: list[Pair], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [
        json.dumps({"id": p.id, "label": p.label, "first": p.first, "second": p.second})
        for p in pairs
    ]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m engram_bench.memory.nli_data SNLI_JSONL OUT_JSONL", file=sys.stderr)
        return 2
    source, out = Path(argv[0]), Path(argv[1])
    with source.open(encoding="utf-8") as handle:
        pairs = sample(json.loads(line) for line in handle if line.strip())
    write_pairs(pairs, out)
    print(f"{len(pairs)} pairs written to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
