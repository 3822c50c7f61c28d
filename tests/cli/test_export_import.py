"""``engram export`` → ``engram import`` through the real CLI: an empty project gets the same
memories, chains, revisions, scopes, importance and access counts; importing again changes
nothing; an older copy never overwrites a newer memory, and no wording is lost either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.memories.files import memory_files
from engram.memories.lifecycle.revisions import revisions_of
from support import cli, cli_json


def make_project(root: Path) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n',
        encoding="utf-8",
    )
    return root


def enter(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Work in ``root`` with a user folder of its own (another machine)."""
    monkeypatch.chdir(root)
    monkeypatch.setenv("XDG_DATA_HOME", str(root / "xdg"))


def files(root: Path) -> dict[str, str]:
    """Every memory file of the project and user folders, by path inside its folder."""
    out = {}
    for base in (root / "memory", root / "xdg" / "engram" / "memory"):
        for path in memory_files(base):
            out[f"{base.name}/{path.relative_to(base).as_posix()}"] = path.read_text("utf-8")
    return out


def listing(capsys: pytest.CaptureFixture[str]) -> dict[str, dict[str, Any]]:
    rows = cli_json(capsys, "list", "--include-superseded")
    keep = ("type", "scope", "status", "title", "supersedes", "superseded_by", "importance")
    return {row["id"]: {k: row.get(k) for k in keep} for row in rows}


@pytest.fixture
def source(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> tuple[Path, dict[str, str]]:
    root = make_project(tmp_path / "a")
    enter(root, monkeypatch)
    first = cli_json(capsys, "remember", "The deploy script lives in scripts/deploy.sh.")
    again = cli_json(capsys, "remember", "the deploy script lives in  scripts/deploy.sh")
    assert again["id"] == first["id"] and again["action"] == "updated"
    old = cli_json(capsys, "remember", "The API listens on port 8080.", "--type", "project-config")
    new = cli_json(capsys, "remember", "The API listens on port 9090.", "--type", "project-config")
    assert old["id"] in new["superseded"]
    cli_json(capsys, "remember", "Always answer in British English.", "--scope", "user")
    cli_json(capsys, "remember", "Release notes go out on Fridays.", "--importance", "7")
    code, _, err = cli(capsys, "search", "deploy script")
    assert code == 0, err
    return root, {"merged": first["id"], "old": old["id"], "new": new["id"]}


def test_export_then_import_into_an_empty_project_gives_the_same_memories(
    source: tuple[Path, dict[str, str]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, ids = source
    before = listing(capsys)
    counts = {r["id"]: r["access_count"] for r in cli_json(capsys, "list", "--include-superseded")}
    assert counts[ids["merged"]] >= 1
    code, out, err = cli(capsys, "export")
    assert code == 0, err
    records = [json.loads(line) for line in out.splitlines()]
    assert len(records) == len(files(root)) == 5
    dump = tmp_path / "memories.jsonl"
    dump.write_text(out, encoding="utf-8")

    target = make_project(tmp_path / "b")
    enter(target, monkeypatch)
    report = cli_json(capsys, "import", str(dump))
    assert len(report["created"]) == 5 and not report["skipped"], report
    assert files(target) == files(root)  # byte for byte, in the same folders
    assert listing(capsys) == before
    after = {r["id"]: r["access_count"] for r in cli_json(capsys, "list", "--include-superseded")}
    assert after == counts
    chain = cli_json(capsys, "history", ids["new"])
    texts = json.dumps(chain)
    assert "port 8080" in texts and "port 9090" in texts
    merged_path = next(p for p in memory_files(target / "memory") if "deploy" in p.name)
    assert [r.wording for r in revisions_of(merged_path)] == [
        "The deploy script lives in scripts/deploy.sh."
    ]
    hits = cli_json(capsys, "search", "deploy script", "--mode", "keyword")
    assert any("deploy" in hit["text"] for hit in hits["hits"])

    again = cli_json(capsys, "import", str(dump))
    assert len(again["unchanged"]) == 5 and not again["created"] and not again["merged"]
    assert files(target) == files(root)


def test_an_older_copy_never_overwrites_a_newer_memory_and_loses_no_wording(
    source: tuple[Path, dict[str, str]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    root, ids = source
    code, out, _ = cli(capsys, "export")
    assert code == 0
    record = next(json.loads(line) for line in out.splitlines() if ids["merged"] in line)
    path = next(p for p in memory_files(root / "memory") if "deploy" in p.name)
    current = path.read_text(encoding="utf-8")

    older = dict(record)
    older["markdown"] = current.replace(
        "the deploy script lives in  scripts/deploy.sh", "Deploys run from scripts/ship.sh."
    ).replace("updated_at: '20", "updated_at: '19")
    assert older["markdown"] != current
    dump = tmp_path / "older.jsonl"
    dump.write_text(json.dumps(older) + "\n", encoding="utf-8")
    report = cli_json(capsys, "import", str(dump))
    assert report["merged"] == [f"project:{record['path']}"]
    text = path.read_text(encoding="utf-8")
    assert "the deploy script lives in  scripts/deploy.sh" in text.split("---", 2)[2]
    wordings = [r.wording for r in revisions_of(path)]
    assert "Deploys run from scripts/ship.sh." in wordings
    assert "The deploy script lives in scripts/deploy.sh." in wordings

    newer = dict(record)
    newer["markdown"] = current.replace(
        "the deploy script lives in  scripts/deploy.sh", "Deploys run from bin/deploy."
    ).replace("updated_at: '20", "updated_at: '30")
    dump.write_text(json.dumps(newer) + "\n", encoding="utf-8")
    cli_json(capsys, "import", str(dump))
    text = path.read_text(encoding="utf-8")
    assert "Deploys run from bin/deploy." in text.split("---", 2)[2]
    wordings = [r.wording for r in revisions_of(path)]
    for kept in (
        "Deploys run from scripts/ship.sh.",
        "The deploy script lives in scripts/deploy.sh.",
        "the deploy script lives in  scripts/deploy.sh",
    ):
        assert kept in wordings
    again = cli_json(capsys, "import", str(dump))
    assert again["unchanged"] == [f"project:{record['path']}"]


def test_a_record_that_leads_outside_the_folder_is_skipped_and_the_rest_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "a")
    enter(root, monkeypatch)
    cli_json(capsys, "remember", "Keep this one.")
    code, out, _ = cli(capsys, "export")
    assert code == 0
    good = json.loads(out.splitlines()[0])
    evil = dict(good, path="../../escaped.md")
    evil["markdown"] = good["markdown"].replace(good["id"], "20240101-000000-abcdef")
    evil["id"] = "20240101-000000-abcdef"
    target = make_project(tmp_path / "b")
    enter(target, monkeypatch)
    dump = tmp_path / "mixed.jsonl"
    dump.write_text(json.dumps(evil) + "\n" + json.dumps(good) + "\n", encoding="utf-8")
    report = cli_json(capsys, "import", str(dump))
    assert report["skipped"] == ["project:../../escaped.md"] and len(report["created"]) == 1
    assert not (tmp_path / "escaped.md").exists() and not (target / "escaped.md").exists()


def test_a_file_that_is_not_an_export_is_one_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path / "a")
    enter(root, monkeypatch)
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"role": "user", "content": "hi"}\n', encoding="utf-8")
    code, _, err = cli(capsys, "import", str(bad))
    assert code == 1
    assert "bad.jsonl:1 is not an engram memory record" in err and "Traceback" not in err
    code, _, err = cli(capsys, "import", str(tmp_path / "missing.jsonl"))
    assert code != 0 and "is not a file" in err
