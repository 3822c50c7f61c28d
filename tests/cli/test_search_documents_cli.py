"""``per_document`` through the real CLI: the ``[search] per_document`` default and the
``--per-chunk`` flag (each command opens the store anew, so this runs on the persistent SQLite
store; Memory and the MCP tool: core/tests/search/test_search_documents.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.cli import main
from support import write_billing_vault


def test_the_config_default_and_the_cli_flag(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write_billing_vault(tmp_path)
    (tmp_path / "engram.toml").write_text(
        '[vault]\npaths = ["notes"]\n[chunking]\nmax_tokens = 64\noverlap = 0\n'
        '[embedder]\nprovider = "hash"\n[search]\nper_document = true\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(tmp_path)
    assert main(["index"]) == 0
    capsys.readouterr()
    assert main(["search", "billing invoice retry", "-n", "3", "--mode", "keyword", "--json"]) == 0
    paths = [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]]
    assert len(paths) == len(set(paths)) == 3
    assert (
        main(
            [
                "search",
                "billing invoice retry",
                "-n",
                "3",
                "--mode",
                "keyword",
                "--per-chunk",
                "--json",
            ]
        )
        == 0
    )
    paths = [h["path"] for h in json.loads(capsys.readouterr().out)["hits"]]
    assert paths == ["notes/runbook.md"] * 3
