"""``python -m engram.testing.matrix [PATHS]``: run conformance tests and print a pass/fail table
per backend (test class) and per test group. Used by ``nox -s conformance``.

Exit code is pytest's: non-zero if any conformance test failed.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

GROUPS: list[tuple[str, tuple[str, ...]]] = [
    ("integrity", ("test_no_suite_test",)),
    ("state machine", ("test_state_machine",)),
    (
        "identity",
        (
            "test_identity",
            "test_wrong_dimension",
            "test_non_finite",
            "test_vectors_before",
            "test_declares",
        ),
    ),
    ("filters", ("test_filter", "test_malformed")),
    ("keyword", ("test_keyword",)),
    ("vector", ("test_vector",)),
    ("delete", ("test_delete",)),
    (
        "write/read",
        ("test_upsert", "test_get", "test_chunks_without", "test_search_hits", "test_results"),
    ),
    ("bookkeeping", ("test_count", "test_documents", "test_reset")),
    ("persistence & edges", ("test_close", "test_very_large", "test_ids", "test_metadata")),
    (
        "searcher",
        ("test_hits_are", "test_the_matching", "test_punctuation", "test_hybrid_degrades"),
    ),
    (
        "extractor",
        (
            "test_empty_conversation",
            "test_finds_typed",
            "test_every_mode",
            "test_unicode_and",
            "test_summary_mode",
            "test_init_mode",
            "test_a_successful_call",
            "test_recall_on",
            "test_a_changed_preference",
            "test_unrelated_memories",
            "test_condense_gives",
        ),
    ),
    (
        "embedder",
        (
            "test_one_finite",
            "test_empty",
            "test_same_text",
            "test_batching",
            "test_large",
            "test_query_and",
            "test_similar",
        ),
    ),
]


def group_of(test_name: str) -> str:
    for group, prefixes in GROUPS:
        if test_name.startswith(prefixes):
            return group
    return "other"


def discover(root: Path) -> list[Path]:
    """Every test_conformance.py of the repo's distributions."""
    patterns = (
        "core/tests/plugins/test_conformance.py",
        "backends/*/tests/test_conformance.py",
        "embedders/*/tests/test_conformance.py",
        "extractors/*/tests/test_conformance.py",
    )
    return sorted(p for pattern in patterns for p in root.glob(pattern))


def main(argv: list[str]) -> int:
    # Existing files are test paths; everything else goes to pytest as is (-k expr, --maxfail=1).
    paths = [Path(a) for a in argv if Path(a).exists()] or discover(Path.cwd())
    extra = [a for a in argv if not Path(a).exists()]
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                f"--junitxml={report}",
                *extra,
                *map(str, paths),
            ]
        )
        results = _parse(report) if report.exists() else {}
    _print(results)
    return code


def _parse(report: Path) -> dict[str, dict[str, list[bool]]]:
    """{backend (test class): {group: [passed?...]}}"""
    out: dict[str, dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for case in ET.parse(report).getroot().iter("testcase"):
        backend = case.get("classname", "?").rsplit(".", 1)[-1]
        name = case.get("name", "").split("[")[0]
        failed = any(child.tag in ("failure", "error") for child in case)
        skipped = any(child.tag == "skipped" for child in case)
        out[backend][group_of(name)].append(not failed and not skipped)
    return out


def _print(results: dict[str, dict[str, list[bool]]]) -> None:
    groups = [g for g, _ in GROUPS] + ["other"]
    used = [g for g in groups if any(g in r for r in results.values())]
    table = Table(title="engram conformance", title_justify="left")
    table.add_column("backend")
    for g in used:
        table.add_column(g, justify="center")
    table.add_column("total", justify="right")
    for backend, by_group in sorted(results.items()):
        cells = []
        for g in used:
            runs = by_group.get(g, [])
            if not runs:
                cells.append("-")
            elif all(runs):
                cells.append(f"[green]✓ {len(runs)}[/]")
            else:
                cells.append(f"[red]✗ {runs.count(False)}/{len(runs)}[/]")
        every = [ok for runs in by_group.values() for ok in runs]
        cells.append(f"{every.count(True)}/{len(every)}")
        table.add_row(backend, *cells)
    Console(width=200).print(table)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
