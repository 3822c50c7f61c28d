"""Sessions are a first-class source through the real CLI: ``rebuild`` keeps what ``engram
sessions`` indexed, and ``get`` reads the ``sessions/...`` paths that search prints."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_support import copy_fixtures
from support import cli, cli_json, write_vault

QUERY = "coupon discount applied twice"
FIRST_TURN = "The checkout page crashes when the cart has a coupon code."


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project whose transcripts are indexed on demand (``[sessions] enabled`` is off, so
    nothing but ``engram sessions`` puts them in the store)."""
    opencode, claude = copy_fixtures(tmp_path / "agents")
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n\n'
        f'[sessions]\nenabled = false\nscope = "all"\ndirs = {{opencode = {str(opencode)!r}, '
        f"claude-code = {str(claude)!r}}}\n",
        encoding="utf-8",
    )
    write_vault(tmp_path / "notes", {"deploy.md": "# Deploy\n\nRoll back with make rollback.\n"})
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _session_paths(capsys: pytest.CaptureFixture[str]) -> list[str]:
    hits = cli_json(capsys, "search", QUERY, "--limit", "20")["hits"]
    return sorted({h["path"] for h in hits if h["path"].startswith("sessions/")})


def test_rebuild_keeps_the_sessions_that_were_indexed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "index")[0] == 0
    assert cli(capsys, "sessions")[0] == 0
    before = _session_paths(capsys)
    assert "sessions/opencode/ses_alpha" in before
    code, _, err = cli(capsys, "rebuild")
    assert code == 0, err
    assert _session_paths(capsys) == before
    stats = cli_json(capsys, "stats")
    by_source = stats["documents_by_source"]
    assert by_source["sessions"] == 5 and by_source["vault notes"]


def test_get_reads_the_session_paths_search_prints(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(capsys, "sessions")[0] == 0
    path = "sessions/opencode/ses_alpha"
    assert path in _session_paths(capsys)
    code, out, err = cli(capsys, "get", path)
    assert code == 0, err
    assert FIRST_TURN in out and "[3] user" in out
    code, out, err = cli(capsys, "get", path, "--lines", "1:1")
    assert code == 0, err
    assert FIRST_TURN in out and "[2]" not in out


def test_get_still_refuses_a_session_path_that_was_never_indexed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "get", "sessions/opencode/ses_nope")
    assert code == 1 and "outside the vault" in err and "Traceback" not in err
