"""Issue #36's "Through the CLI" cases, with the real CLI, the real SQLite store and the local
embedder: a changed fact supersedes with its history, another person's fact stays apart, a
many-valued taste is linked, and a memory's subject is in its frontmatter and filters the list."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def remember(capsys: pytest.CaptureFixture[str], text: str) -> Any:
    return cli_json(capsys, "remember", text, "--type", "fact")


def live(capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, Any]:
    return {m["id"]: m for m in cli_json(capsys, "list", *extra)}


def test_a_move_supersedes_with_history_and_another_person_stays_apart(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paris = remember(capsys, "Alice lives in Paris.")
    berlin = remember(capsys, "Alice moved to Berlin.")
    assert berlin["action"] == "created" and berlin["superseded"] == [paris["id"]]
    bob = remember(capsys, "Bob lives in Paris.")
    assert bob["action"] == "created"
    assert bob["superseded"] == [] and bob["linked_conflicts"] == []
    heads = live(capsys)
    assert set(heads) == {berlin["id"], bob["id"]}
    wordings = [e["wording"] for e in cli_json(capsys, "history", berlin["id"])["entries"]]
    assert any("Paris" in w for w in wordings) and any("Berlin" in w for w in wordings)
    about_alice = live(capsys, "--subject", "Alice")
    assert list(about_alice) == [berlin["id"]]
    assert about_alice[berlin["id"]]["subject"] == "alice"
    text = (project / berlin["path"]).read_text(encoding="utf-8")
    assert "subject: alice" in text and "attribute: live in" in text and "value: berlin" in text


def test_two_people_in_one_house_stay_separate(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deborah = remember(capsys, "Deborah visited her mother's house.")
    jolene = remember(capsys, "Jolene has a room in her mother's house.")
    assert jolene["action"] == "created"
    assert jolene["superseded"] == [] and jolene["linked_conflicts"] == []
    assert set(live(capsys)) == {deborah["id"], jolene["id"]}


def test_two_tastes_stay_live_and_related(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tea = remember(capsys, "I like tea.")
    coffee = remember(capsys, "I like coffee.")
    assert coffee["action"] == "created" and coffee["superseded"] == []
    assert coffee["linked_related"] == [tea["id"]]
    assert set(live(capsys, "--subject", "user")) == {tea["id"], coffee["id"]}


def test_a_new_deploy_day_supersedes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tuesday = remember(capsys, "We deploy on Tuesdays.")
    thursday = remember(capsys, "We deploy on Thursdays.")
    assert thursday["superseded"] == [tuesday["id"]]
    assert set(live(capsys)) == {thursday["id"]}


def test_a_subject_given_on_the_command_line_is_kept(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = cli_json(capsys, "remember", "Prefers window seats.", "--subject", "Caroline")
    assert stored["subject"] == "Caroline"
    assert list(live(capsys, "--subject", "caroline")) == [stored["id"]]
    assert live(capsys, "--subject", "Melanie") == {}
