"""A project configured for OpenAI with no key set, through the real CLI: index and search
degrade to keyword with a warning that names the variable, as for an unreachable API; once the
key is there, the next index embeds what was stored keyword-only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from fake_apis import FakeOpenAI
from support import cli, write_vault

NOTES = {
    "deploy.md": "# Deploy\n\nRoll back a bad deploy with make rollback ENV=prod.\n",
    "db.md": "# Database\n\nPromote the PostgreSQL replica with pg_ctl promote.\n",
}


@pytest.fixture
def project(fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "openai"\n'
        f'base_url = "{fake.url}"\ndimension = 64\nmax_retries = 0\n\n'
        '[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    write_vault(tmp_path / "notes", dict(NOTES))
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-openai,engram-sqlite")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_without_a_key_index_and_search_degrade_to_keyword(
    project: Path, fake: FakeOpenAI, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = cli(capsys, "index", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["new"] == 2 and report["pending_embeddings"] == 2
    assert report["texts_embedded"] == 0
    assert any(
        "OPENAI_API_KEY is not set" in w and "keyword search only" in w for w in report["warnings"]
    )
    code, out, err = cli(capsys, "search", "rollback deploy", "--json")
    assert code == 0, err
    result = json.loads(out)
    assert result["degraded"] is True and result["hits"][0]["path"] == "notes/deploy.md"
    assert any("OPENAI_API_KEY" in w for w in result["warnings"])
    code, out, err = cli(capsys, "search", "rollback deploy")
    assert code == 0 and "notes/deploy.md" in out and "OPENAI_API_KEY" in err
    assert "Traceback" not in err


def test_once_the_key_is_set_the_next_index_embeds_what_was_waiting(
    project: Path,
    fake: FakeOpenAI,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli(capsys, "index")[0] == 0
    monkeypatch.setenv("OPENAI_API_KEY", fake.api_key)
    code, out, err = cli(capsys, "index", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["changed"] == 2 and report["texts_embedded"] == 2
    assert report["pending_embeddings"] == 0
    code, out, _ = cli(capsys, "search", "promote replica", "--mode", "vector", "--json")
    result = json.loads(out)
    assert result["degraded"] is False and result["hits"][0]["path"] == "notes/db.md"
