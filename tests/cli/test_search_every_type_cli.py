"""Issue #36 point 5: a question that asks for a kind of memory lists that kind's live memories
through ``engram search``, for every type, not only preferences and decisions: "list all my
error solutions", "show all config", "what did we decide" (real CLI, SQLite, local embedder)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engram.memories.query_types import ASKING_WORDS, asked_type
from engram.types import NAMES
from support import cli_json


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "local"\n', encoding="utf-8"
    )
    monkeypatch.chdir(root)
    return root


@pytest.mark.parametrize(
    ("question", "kind"),
    [
        ("List all my error solutions", "error-solution"),
        ("show all config", "project-config"),
        ("what did we decide", "decision"),
        ("what progress did we make", "progress"),
        ("what are my preferences", "preference"),
    ],
)
def test_a_question_names_its_type(question: str, kind: str) -> None:
    assert asked_type(question) == kind
    assert set(ASKING_WORDS.values()) <= set(NAMES)


def test_every_error_solution_is_listed_ahead_of_the_rest(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixes = [
        "ImportError for yaml: the fix was to install pyyaml.",
        "Port 5432 already in use: stop the old postgres container first.",
        "TLS handshake timeout in CI: pin the proxy certificate bundle.",
    ]
    ids = {cli_json(capsys, "remember", f, "--type", "error-solution")["id"] for f in fixes}
    cli_json(capsys, "remember", "The user likes short commit messages.", "--type", "preference")
    cli_json(capsys, "remember", "The API listens on port 8080.", "--type", "project-config")
    hits = cli_json(capsys, "search", "List all my error solutions")["hits"]
    first = hits[: len(fixes)]
    assert {h["metadata"]["type"] for h in first} == {"error-solution"}
    assert {h["metadata"]["id"] for h in first} == ids
