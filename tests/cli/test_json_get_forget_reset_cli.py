"""``engram get``, ``forget`` and ``reset`` answer in JSON with ``--json`` (issue 38), as the
other commands do, for scripts; an error stays one line on stderr with exit 1."""

from __future__ import annotations

from pathlib import Path

import pytest

from support import cli, cli_json, write_vault


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    write_vault(tmp_path / "notes", {"billing.md": "# Billing\n\nAlice owns billing.\nLine 4.\n"})
    (tmp_path / "engram.toml").write_text(
        '[vault]\npaths = ["notes"]\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_get_json_is_the_excerpt(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli(capsys, "index")[0] == 0
    excerpt = cli_json(capsys, "get", "notes/billing.md", "--lines", "3:3")
    assert excerpt["path"] == "notes/billing.md"
    assert (excerpt["start_line"], excerpt["end_line"]) == (3, 3)
    assert excerpt["text"].strip() == "Alice owns billing."
    code, out, err = cli(capsys, "get", "../outside.md", "--json")
    assert code == 1 and out == "" and len(err.strip().splitlines()) == 1


def test_forget_json_lists_what_was_removed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    stored = cli_json(capsys, "remember", "Deploys go out on Tuesdays.")
    done = cli_json(capsys, "forget", stored["id"])
    assert done == {"forgotten": [stored["path"]]}
    assert not (project / stored["path"]).exists()
    code, out, err = cli(capsys, "forget", stored["id"], "--json")
    assert code == 1 and out == "" and "Traceback" not in err


def test_reset_json_says_what_was_emptied(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "index")[0] == 0
    code, out, err = cli(capsys, "reset", "--json")  # without --yes: refused, one line
    assert (code, out) == (1, "") and "--yes" in err and len(err.strip().splitlines()) == 1
    assert cli_json(capsys, "reset", "--yes") == {
        "backend": "sqlite",
        "reset": True,
        "damaged_kept": None,
    }
    assert cli_json(capsys, "stats")["chunks"] == 0
    assert (project / "notes" / "billing.md").is_file()  # the markdown stays
