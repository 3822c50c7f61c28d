"""Issue #23's pairs through the real CLI, the real SQLite store and the real local embedder:
another invoice or host is a second memory (both findable), a reversal supersedes, and the same
fact reworded is merged."""

from __future__ import annotations

from pathlib import Path

import pytest

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
    ("first", "second", "kind"),
    [
        (
            "Invoice INV-2024-0042 was paid on March 3.",
            "Invoice INV-2024-0043 was paid on March 3.",
            "note",
        ),
        ("Service alpha110 runs on host h110.", "Service alpha1110 runs on host h1110.", "fact"),
    ],
)
def test_another_identifier_is_a_second_memory_and_both_are_found(
    project: Path, capsys: pytest.CaptureFixture[str], first: str, second: str, kind: str
) -> None:
    a = cli_json(capsys, "remember", first, "--type", kind)
    b = cli_json(capsys, "remember", second, "--type", kind)
    assert (a["action"], b["action"]) == ("created", "created") and b["superseded"] == []
    assert first in (project / a["path"]).read_text(encoding="utf-8")
    for text, memory in ((first, a), (second, b)):
        hits = cli_json(capsys, "search", text, "--mode", "keyword")["hits"]
        assert memory["path"] in [h["path"] for h in hits]


def test_always_then_never_supersedes_and_keeps_the_old_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = cli_json(capsys, "remember", "Always run ruff before committing.", "--type", "preference")
    b = cli_json(capsys, "remember", "Never run ruff before committing.", "--type", "preference")
    assert b["action"] == "created" and b["superseded"] == [a["id"]]
    assert "Always run ruff" in (project / a["path"]).read_text(encoding="utf-8")


def test_the_same_fact_reworded_is_merged(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a = cli_json(capsys, "remember", "A dog licks his nose.")
    b = cli_json(capsys, "remember", "A dog is licking his nose.")
    assert b["action"] == "updated" and b["id"] == a["id"]
