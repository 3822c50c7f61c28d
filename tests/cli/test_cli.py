"""The ``engram`` command as a user meets it: ranked hits, JSON, and one-line errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engram.cli import main
from support import SAMPLE_VAULT, write_vault


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder with an engram.toml using the hash embedder (fast, deterministic)."""
    (tmp_path / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n', encoding="utf-8"
    )
    write_vault(
        tmp_path / "notes",
        {
            "deploy.md": "# Deploy\n\nRoll back a bad deploy with make rollback ENV=prod.\n",
            "db.md": "# Database\n\nPromote the PostgreSQL replica with pg_ctl promote.\n",
        },
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def test_index_then_search_prints_ranked_hits(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "index", "notes")
    assert code == 0 and "2 new" in out
    code, out, _ = run(capsys, "search", "rollback deploy", "--json")
    assert code == 0
    hits = json.loads(out)["hits"]
    assert hits[0]["path"] == "notes/deploy.md"
    assert hits == sorted(hits, key=lambda h: -h["score"])
    code, out, _ = run(capsys, "search", "promote replica")
    assert code == 0 and "notes/db.md" in out


def test_get_reads_lines_and_refuses_paths_outside_the_vault(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index", "notes")
    code, out, _ = run(capsys, "get", "notes/db.md", "--lines", "3:3")
    assert code == 0 and out.strip() == "Promote the PostgreSQL replica with pg_ctl promote."
    (project / "outside.md").write_text("secret\n", encoding="utf-8")
    for bad in (
        "outside.md",
        "../outside.md",
        "notes/../outside.md",
        str(project / "outside.md"),
        "/etc/passwd",
    ):
        code, out, err = run(capsys, "get", bad)
        assert code == 1, bad
        assert "outside the vault" in err and "Traceback" not in err
        assert "secret" not in out


def test_unknown_backend_is_one_line_listing_what_is_installed(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--store", "nope", "stats")
    assert code == 1
    assert "no store named 'nope'" in err and "sqlite" in err
    assert len(err.strip().splitlines()) == 1


def test_known_but_missing_backend_says_how_to_install_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--store", "weaviate-cloud", "stats")
    assert code == 1 and "installed:" in err


def test_malformed_config_names_the_file_and_field(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "engram.toml").write_text("[search]\nlimit = 'many'\n", encoding="utf-8")
    code, _, err = run(capsys, "stats")
    assert code == 1 and "search.limit" in err and "engram.toml" in err
    (project / "engram.toml").write_text("[search\nlimit = 3\n", encoding="utf-8")
    code, _, err = run(capsys, "stats")
    assert code == 1 and "not valid TOML" in err


def test_query_of_only_punctuation_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index", "notes")
    code, _, err = run(capsys, "search", '"*-?!"')
    assert code == 1 and "no words" in err.lower()


def test_hostile_keyword_queries_work(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "index", "notes")
    for query in [
        '"unbalanced',
        "pg_ctl AND (promote OR",
        "NEAR(replica, promote)",
        "roll-back*",
        "ENV=prod:",
    ]:
        code, out, err = run(capsys, "search", query, "--mode", "keyword", "--json")
        assert code == 0, (query, err)
        json.loads(out)


def test_switching_embedder_on_a_built_store_is_refused_with_the_fix(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index", "notes")
    code, _, err = run(capsys, "--set", "embedder.dimension=64", "index", "notes")
    assert code == 1 and "engram rebuild" in err and "256" in err and "64" in err
    code, out, _ = run(capsys, "search", "deploy", "--json")
    assert code == 0 and json.loads(out)["hits"], (
        "refusing the new identity must not lose what was stored"
    )


def test_stats_and_doctor_report_the_store(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run(capsys, "index", "notes")
    code, out, _ = run(capsys, "stats", "--json")
    stats = json.loads(out)
    assert code == 0 and stats["documents"] == 2 and stats["identity"]["embedder"] == "hash"
    code, out, _ = run(capsys, "doctor")
    report = json.loads(out)
    assert code == 0 and "sqlite" in report["plugins"]["store"]
    assert report["store"]["chunks"] == stats["chunks"]


def test_rebuild_from_markdown(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run(capsys, "index", "notes")
    code, out, _ = run(capsys, "rebuild", "--json")
    assert code == 0 and json.loads(out)["new"] == 2


def test_cli_subprocess_never_prints_a_traceback(project: Path) -> None:
    env = {**os.environ, "ENGRAM_USER_CONFIG": str(project / "none.toml")}
    proc = subprocess.run(
        [sys.executable, "-m", "engram", "get", "/etc/passwd"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.startswith("error:") and "Traceback" not in proc.stderr


def test_sample_vault_quickstart_ranks_the_rollback_note_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, _ = run(capsys, "--embedder", "hash", "index", str(SAMPLE_VAULT))
    assert code == 0 and "10 new" in out
    code, out, _ = run(
        capsys, "--embedder", "hash", "search", "how do we roll back a deploy", "--json"
    )
    assert json.loads(out)["hits"][0]["path"].endswith("projects/billing-service.md")


def test_doctor_never_prints_an_api_key(
    project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENGRAM_STORE__ACCESS_TOKEN", "tok-SECRET-42")
    code, out, err = run(capsys, "--set", "store.api_key='sk-SECRET-1'", "doctor")
    assert code == 0 and "SECRET" not in out + err
