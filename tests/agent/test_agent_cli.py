"""``engram remember / list / forget / sessions`` as a user types them."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from agent_support import copy_fixtures
from engram.cli import main


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    opencode, claude = copy_fixtures(tmp_path / "agents")
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n\n'
        f'[sessions]\nscope = "all"\ndirs = {{opencode = "{opencode.as_posix()}", '
        f'claude-code = "{claude.as_posix()}"}}\n',
        encoding="utf-8",
    )
    (tmp_path / "notes").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_remember_list_forget(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys,
        "remember",
        "Prefer small pull requests.",
        "--type",
        "preference",
        "--scope",
        "user",
        "--tag",
        "git",
        "--json",
    )
    assert code == 0
    stored = json.loads(out)
    # scope user: the user-wide folder ($XDG_DATA_HOME/engram/memory), shared by every project
    user_dir = Path(os.environ["XDG_DATA_HOME"]) / "engram" / "memory"
    assert Path(stored["path"]) == user_dir / "preference" / "prefer-small-pull-requests.md"
    assert stored["scope"] == "user" and not (project / "memory").exists()
    code, out, _ = run(capsys, "list", "--type", "preference", "--json")
    assert code == 0 and [m["id"] for m in json.loads(out)] == [stored["id"]]
    code, out, _ = run(capsys, "search", "small pull requests", "--json")
    assert json.loads(out)["hits"][0]["path"] == stored["path"]
    code, out, _ = run(capsys, "forget", stored["id"])
    assert code == 0 and stored["path"] in out
    code, out, err = run(capsys, "list")
    assert code == 0 and "no memories" in err
    code, _, err = run(capsys, "forget", "../engram.toml")
    assert code == 1 and "refused" in err and (project / "engram.toml").exists()


def test_sessions_command_indexes_transcripts(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "sessions")
    assert code == 0 and "5 new" in out and "sessions" in out
    assert "not valid JSON" in err
    code, out, _ = run(capsys, "sessions", "--json")
    assert code == 0 and json.loads(out)["unchanged"] == 5
    code, out, _ = run(capsys, "search", "kafka consumer lagging", "--json")
    assert json.loads(out)["hits"][0]["path"].startswith("sessions/claude-code/")


def test_integrations_doc_covers_every_agent_setting_and_its_json_parses() -> None:
    from engram.config import MemoryFolderConfig, RecallConfig, SessionsConfig
    from support import REPO

    doc = (REPO / "docs" / "integrations.md").read_text(encoding="utf-8")
    for section in (MemoryFolderConfig, SessionsConfig, RecallConfig):
        for key in section.model_fields:
            assert f"| `{key}` |" in doc, f"docs/integrations.md does not document {key}"
    blocks = re.findall(r"```json\n(.+?)\n```", doc, flags=re.DOTALL)
    assert len(blocks) >= 3
    for block in blocks:
        json.loads(block)


@pytest.mark.parametrize(
    ("target", "says"),
    [
        ("20240101-000000-abcdef", "no memory with id 20240101-000000-abcdef"),
        ("not-an-id", "no memory with id not-an-id"),
    ],
)
def test_forget_an_unknown_id_says_so(
    project: Path, capsys: pytest.CaptureFixture[str], target: str, says: str
) -> None:
    code, _, err = run(capsys, "forget", target)
    assert code == 1 and says in err
    assert "outside" not in err and "Traceback" not in err
