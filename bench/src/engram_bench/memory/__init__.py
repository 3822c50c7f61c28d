"""The ``memory`` section: does the memory lifecycle keep and judge facts right, on public data?

Its NLI part (``nli``) writes labelled SNLI pairs through the real write path and counts what was
merged, superseded, linked or kept, per gold label. Its extraction part (``extraction``) captures
LoCoMo's conversations in windows and measures the memories against LoCoMo's observation facts.
Its judge part (``judge``) writes a public knowledge-update set's updates and controls, and
replays LoCoMo's observation facts through ``remember``, listing every supersede and conflict.
NLI and extraction run the ``rules`` extractor always, and the ``llm`` extractor too whenever an
OpenAI-compatible endpoint is configured (the bench's ``llm_options``, or ``OPENAI_API_KEY`` in
the environment for the default provider) and engram-llm is installed.

The data is public and not in this repository: the SNLI sample is read from ``--nli-pairs``, else
``<--data>/snli/pairs.jsonl``, else ``bench/data/snli/pairs.jsonl`` (a local copy, ignored by
git); LoCoMo from ``<--data>/locomo``. A part whose data is missing is reported as skipped, with
where to put it (bench/data/snli/README.md tells how the sample is made).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from engram.errors import ConfigError
from engram.registry import Registry
from engram_bench.config import BenchConfig
from engram_bench.embedding import build_embedder, cached
from engram_bench.memory.extraction import render_extraction, run_extraction
from engram_bench.memory.judge import render_judge, run_judge
from engram_bench.memory.nli import OUTCOMES, Log, run_nli
from engram_bench.memory.nli_data import DEFAULT_PAIRS, LABELS, load_pairs


def memory_extractors(
    config: BenchConfig, registry: Registry, notes: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """``rules``, and ``llm`` when an endpoint is configured (see the module docstring)."""
    chosen: list[tuple[str, dict[str, Any]]] = [("rules", {})]
    configured = config.llm_options is not None or bool(os.environ.get("OPENAI_API_KEY"))
    if not configured:
        notes.append("memory: llm not run (no llm_options and no OPENAI_API_KEY)")
    elif "llm" not in registry.names("extractor"):
        notes.append("memory: llm not run (engram-llm is not installed)")
    else:
        chosen.append(("llm", dict(config.llm_options or {})))
    return chosen


def nli_source(config: BenchConfig) -> Path | None:
    """Where the SNLI sample is (see the module docstring); None when nowhere."""
    if config.nli_pairs is not None:
        return config.nli_pairs  # asked for by name: a missing file is an error, said by load
    for candidate in (config.data / "snli" / "pairs.jsonl", DEFAULT_PAIRS):
        if candidate.is_file():
            return candidate
    return None


def run_memory(
    config: BenchConfig, registry: Registry, workdir: Path, log: Log, notes: list[str]
) -> dict[str, Any]:
    """The section's results: ``nli`` (one run per extractor and type class),
    ``extraction`` (one LoCoMo run per extractor) and ``judge`` (the offline judge on fact
    updates and LoCoMo's observation facts)."""
    extractors = memory_extractors(config, registry, notes)
    name = config.memory_embedder
    embedder = cached(build_embedder(registry, name, config.embedder_options.get(name, {})), None)
    return {
        "nli": _nli(config, registry, workdir, log, extractors),
        "extraction": [_extraction(config, name, options) for name, options in extractors],
        "judge": run_judge(
            config.data,
            registry,
            embedder,
            workdir,
            conversations=1 if config.quick else None,
            sessions=2 if config.quick else None,
            extractors=extractors,
        ),
    }


def _nli(
    config: BenchConfig,
    registry: Registry,
    workdir: Path,
    log: Log,
    extractors: list[tuple[str, dict[str, Any]]],
) -> dict[str, Any]:
    source = nli_source(config)
    if source is None:
        where = config.data / "snli" / "pairs.jsonl"
        return {
            "skipped": f"no SNLI sample at {where} or {DEFAULT_PAIRS}; make one with "
            "`python -m engram_bench.memory.nli_data SNLI_JSONL OUT` (bench/data/snli/README.md)"
        }
    pairs = load_pairs(source, config.nli_per_label)
    name = config.memory_embedder
    options = config.embedder_options.get(name, {})
    embedder = cached(build_embedder(registry, name, options), None)
    runs = run_nli(registry, embedder, name, extractors, pairs, workdir, log)
    return {
        "source": str(source),
        "dataset": "SNLI 1.0 (CC BY-SA 4.0), bench/data/snli/README.md",
        "pairs": len(pairs),
        "runs": runs,
    }


def _extraction(config: BenchConfig, name: str, options: dict[str, Any]) -> dict[str, Any]:
    try:
        return run_extraction(
            config.data,
            extractor=name,
            extractor_options=options,
            embedder=config.memory_embedder,
            conversations=1 if config.quick else None,
            sessions=2 if config.quick else None,
            cache=config.cache / "embeddings.sqlite",  # the file the other sections share
        )
    except ConfigError as exc:  # no LoCoMo data: say so in the report, run the rest
        return {"extractor": name, "skipped": str(exc)}


def table(header: list[str], rows: list[list[str]]) -> str:
    """A Markdown table (report.py imports this module, so it has its own)."""
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"


def _num(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def render_memory(results: dict[str, Any]) -> list[str]:
    """The section's Markdown: one table of outcomes per gold label, one of the scores."""
    memory = results.get("memory") or {}
    lines = _render_nli(memory.get("nli"))
    for extraction in memory.get("extraction") or []:
        lines += ["", render_extraction(extraction)]
    if memory.get("judge"):
        lines += ["", *render_judge(memory["judge"])]
    return lines


def _render_nli(nli: dict[str, Any] | None) -> list[str]:
    if not nli:
        return []
    if nli.get("skipped"):
        return ["", "## Memory: the write path on NLI pairs", "", f"Skipped: {nli['skipped']}"]
    lines = [
        "",
        "## Memory: the write path on NLI pairs",
        "",
        f"{nli['pairs']} pairs of {nli['dataset']}, each written as A then B through "
        "`Memory.remember` on a fresh SQLite project. A merge is right on an entailment pair, a "
        "supersede on a contradiction pair. Targets (issue #23): contradiction and neutral pairs "
        "merged ≤ 1%; supersede precision ≥ 0.9 and recall ≥ 0.5 with `rules`.",
        "",
    ]
    rows = []
    for run in nli["runs"]:
        for label in LABELS:
            counts = run["outcomes"][label]
            rows.append(
                [run["extractor"], run["type"], label, str(run["pairs"][label])]
                + [str(counts[o]) for o in OUTCOMES]
            )
    lines.append(table(["extractor", "type", "gold", "pairs", *OUTCOMES], rows))
    lines.append("")
    scores = []
    for run in nli["runs"]:
        share = run["merged_share"]
        scores.append(
            [
                run["extractor"],
                run["type"],
                _pct(share["contradiction"]),
                _pct(share["neutral"]),
                _num(run["dedup_precision"]),
                _num(run["dedup_recall"]),
                _num(run["supersede_precision"]),
                _num(run["supersede_recall"]),
                f"{run['a_lost']}" + ("" if run["revisions_checked"] else " (live files only)"),
            ]
        )
    header = [
        "extractor",
        "type",
        "contradictions merged",
        "neutral merged",
        "dedup P",
        "dedup R",
        "supersede P",
        "supersede R",
        "A texts lost",
    ]
    lines.append(table(header, scores))
    return lines + _render_halves(nli["runs"])


def _render_halves(runs: list[dict[str, Any]]) -> list[str]:
    """Supersede precision and recall on the dev half (the judge's rules were tuned on it) and
    the held-out half (never tuned on: the figure that is claimed)."""
    rows = []
    for run in runs:
        for name, half in (run.get("halves") or {}).items():
            wrong = half["superseded"]["entailment"] + half["superseded"]["neutral"]
            rows.append(
                [
                    run["extractor"],
                    run["type"],
                    name,
                    str(half["pairs"]["contradiction"]),
                    str(half["superseded"]["contradiction"]),
                    str(wrong),
                    _num(half["supersede_precision"]),
                    _num(half["supersede_recall"]),
                ]
            )
    if not rows:
        return []
    header = ["extractor", "type", "half", "contradictions", "superseded", "wrongly superseded"]
    return [
        "",
        "Supersede by half (split by a hash of the premise; the judge's rules were tuned on "
        "`dev` only, so `held-out` is the figure that counts):",
        "",
        table([*header, "supersede P", "supersede R"], rows),
    ]
