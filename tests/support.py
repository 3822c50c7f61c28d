"""Helpers shared by the cross-package tests (importable as ``support``; fixtures live in
conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engram.cli import main
from engram.memory import Memory

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "examples" / "vault"
MemoryFactory = Callable[..., Memory]


def write_vault(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return root


def note(i: int) -> str:
    topics = [
        "postgres replication",
        "kubernetes ingress",
        "stripe webhooks",
        "rust lifetimes",
        "grafana alerts",
    ]
    topic = topics[i % len(topics)]
    return (
        f"---\ntitle: Note {i}\ntype: fact\ntags: [t{i % 7}]\n---\n# Note {i} about {topic}\n\n"
        f"This is note number {i}. It talks about {topic} and item-{i}.\n\n## Details\n\n"
        + " ".join(f"word{(i * 31 + j) % 997}" for j in range(40))
        + "\n"
    )


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """Run the real ``engram`` CLI in process: (exit code, stdout, stderr)."""
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    """Run ``engram ARGS --json``, which must succeed, and parse what it printed."""
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)
