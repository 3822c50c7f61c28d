"""Helpers shared by the cross-package tests (importable as ``support``; fixtures live in
conftest.py)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from engram.cli import main
from engram.config import load_config
from engram.memory import Memory

REPO = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = REPO / "examples" / "vault"
MemoryFactory = Callable[..., Memory]


@contextmanager
def memory_factory(root: Path, default_store: str) -> Iterator[MemoryFactory]:
    """``open_memory(store=default_store, embedder="hash", **settings)``: a Memory rooted at
    ``root``; every one opened is closed on exit (the ``open_memory`` fixtures of core/tests, on
    the built-in memory store, and of tests/, on SQLite)."""
    opened: list[Memory] = []

    def factory(store: str = default_store, embedder: str = "hash", **overrides: Any) -> Memory:
        data: dict[str, Any] = {"store": {"backend": store}, "embedder": {"provider": embedder}}
        data.update(overrides)
        memory = Memory.open(load_config(data, start=root))
        opened.append(memory)
        return memory

    try:
        yield factory
    finally:
        for memory in opened:
            memory.close()


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


BILLING_SECTIONS = 40


def write_billing_vault(root: Path) -> None:
    """notes/: a long billing runbook (one chunk per step) and four short files, three of them
    about billing (the per-document search tests)."""
    runbook = "# Billing runbook\n\n" + "\n\n".join(
        f"## Step {i}\n\nBilling invoice retry step {i}: billing invoices retry on failure, "
        f"billing checks invoice {i} again." + " filler" * 30
        for i in range(BILLING_SECTIONS)
    )
    write_vault(
        root / "notes",
        {
            "runbook.md": runbook,
            "owners.md": "# Owners\n\nAlice owns the billing service.\n",
            "oncall.md": "# On-call\n\nBilling pages go to the payments rota.\n",
            "pricing.md": "# Pricing\n\nInvoice totals include billing tax.\n",
            "garden.md": "# Garden\n\nTomatoes need sun.\n",
        },
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
