"""Scopes, aging, prune and history through the real CLI, on real files in a project, the user's
folder ($XDG_DATA_HOME, isolated per test) and an external folder."""

from __future__ import annotations

import itertools
import os
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_support import frontmatter
from engram.memories.files import memory_files, render
from support import cli, cli_json


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    external = tmp_path / "team-notes"
    (external / "runbooks").mkdir(parents=True)
    (external / "runbooks" / "on-call.md").write_text(
        "# On-call\n\nPage the database team when replication lag exceeds five minutes.\n",
        encoding="utf-8",
    )
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n'
        f'[vault]\npaths = ["notes"]\n[memory]\nexternal_paths = ["{external.as_posix()}"]\n',
        encoding="utf-8",
    )
    monkeypatch.chdir(root)
    return root


def user_dir() -> Path:
    return Path(os.environ["XDG_DATA_HOME"]) / "engram" / "memory"


def write_memory(folder: Path, name: str, **meta: Any) -> Path:
    """A memory file as engram writes it, with the frontmatter given (for old dates)."""
    fields = {"id": meta.pop("id"), "title": name, "type": "note", "scope": "project", **meta}
    path = folder / str(fields["type"]) / f"{name}.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(fields, name, f"{name} is a memory about {name}."), encoding="utf-8")
    return path


# --------------------------------------------------------------------------- scopes


def test_search_reads_project_user_and_external_folders(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    user = cli_json(capsys, "remember", "Always answer in British English.", "--scope", "user")
    proj = cli_json(capsys, "remember", "The billing API is versioned in the URL path.")
    assert Path(user["path"]).is_relative_to(user_dir()) and user["scope"] == "user"
    assert proj["path"].startswith("memory/") and proj["scope"] == "project"
    cli_json(capsys, "index")
    found = cli_json(capsys, "search", "replication lag database team", "--mode", "keyword")
    assert found["hits"][0]["path"] == (tmp_path / "team-notes/runbooks/on-call.md").as_posix()
    assert found["hits"][0]["metadata"]["memory_scope"] == "external"
    found = cli_json(capsys, "search", "British English", "--mode", "keyword")
    assert found["hits"][0]["path"] == user["path"]
    listed = {m["scope"] for m in cli_json(capsys, "list")}
    assert listed == {"user", "project", "external"}
    code, out, _ = cli(capsys, "get", (tmp_path / "team-notes/runbooks/on-call.md").as_posix())
    assert code == 0 and "replication lag" in out

    # Another project on the same machine sees the user's memory, not this project's.
    other = tmp_path / "other"
    other.mkdir()
    (other / "engram.toml").write_text('[embedder]\nprovider = "hash"\n', encoding="utf-8")
    os.chdir(other)
    cli_json(capsys, "index")
    found = cli_json(capsys, "search", "British English", "--mode", "keyword")
    assert [h["path"] for h in found["hits"]] == [user["path"]]
    assert cli_json(capsys, "search", "billing API versioned", "--mode", "keyword")["hits"] == []


def test_writes_into_an_external_folder_are_refused_and_lose_nothing(
    project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runbook = tmp_path / "team-notes/runbooks/on-call.md"
    before = runbook.read_bytes()
    cli_json(capsys, "index")
    code, out, err = cli(capsys, "forget", runbook.as_posix())
    assert code == 1 and out == ""
    assert "external memory folder" in err and "only reads" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert runbook.read_bytes() == before
    found = cli_json(capsys, "search", "replication lag", "--mode", "keyword")
    assert found["hits"] and found["hits"][0]["path"] == runbook.as_posix()
    # prune never looks at external folders, even with --scope all
    report = cli_json(capsys, "prune", "--max-count", "0", "--scope", "all")
    assert report["removed"] == [] and runbook.read_bytes() == before


def test_a_user_memory_is_written_only_where_user_scope_allows(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(
        capsys, "--set", "memory.user_scope=false", "remember", "x y z", "--scope", "user"
    )
    assert code == 1 and "no user memory folder" in err and not user_dir().exists()


# --------------------------------------------------------------------------- aging


def test_only_the_newest_progress_memory_stays_live(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    steps = [
        "Progress: the invoice exporter parses CSV files.",
        "Progress: the invoice exporter writes PDF files as well.",
        "Progress: the invoice exporter is deployed to staging.",
    ]
    stored = [cli_json(capsys, "remember", s, "--type", "progress") for s in steps]
    live = cli_json(capsys, "list", "--type", "progress")
    assert [m["id"] for m in live] == [stored[-1]["id"]]
    everything = cli_json(capsys, "list", "--type", "progress", "--include-superseded")
    assert len(everything) == 3 and all((project / m["path"]).is_file() for m in everything)
    for old, newer in itertools.pairwise(stored):  # each by the next: a chain
        meta = frontmatter(project / old["path"])
        assert meta["status"] == "superseded" and meta["superseded_by"] == newer["id"]
    hits = cli_json(capsys, "search", "invoice exporter progress", "--mode", "keyword")["hits"]
    assert [h["path"] for h in hits] == [stored[-1]["path"]]
    chain = cli_json(capsys, "history", stored[0]["id"])["chain"]
    assert [m["id"] for m in chain] == [s["id"] for s in stored]
    assert [m["status"] for m in chain] == ["superseded", "superseded", "live"]
    code, out, _ = cli(capsys, "history", stored[0]["id"])
    assert code == 0 and out.startswith("→ ") and f"superseded by {stored[1]['id']}" in out


def test_old_session_summaries_are_archived_by_the_rules_extractor(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    start = datetime(2025, 5, 1, tzinfo=UTC)
    folder = project / "memory"
    for day in range(5):
        write_memory(
            folder,
            f"session-{day}",
            id=f"2025050{day + 1}-120000-00000{day}",
            type="session-summary",
            project="project",
            created_at=(start + timedelta(days=day)).isoformat(),
        )
    cli_json(capsys, "index")
    dry = cli_json(capsys, "age", "--dry-run")
    assert sorted(Path(p).stem for p in dry["condensed"]) == ["session-0", "session-1"]
    assert all(frontmatter(p).get("status") is None for p in memory_files(folder))
    report = cli_json(capsys, "age")
    assert sorted(Path(p).stem for p in report["archived"]) == ["session-0", "session-1"]
    statuses = {p.stem: frontmatter(p).get("status") for p in memory_files(folder)}
    assert statuses == {
        "session-0": "archived",
        "session-1": "archived",
        "session-2": None,
        "session-3": None,
        "session-4": None,
    }
    live = cli_json(capsys, "list", "--type", "session-summary")
    assert sorted(m["title"] for m in live) == ["session-2", "session-3", "session-4"]
    hits = cli_json(capsys, "search", "session-0 memory", "--mode", "keyword")["hits"]
    assert all("session-0" not in h["path"] for h in hits)
    assert cli_json(capsys, "age")["archived"] == []  # nothing left to age


# --------------------------------------------------------------------------- prune


def test_prune_removes_old_unimportant_memories_first(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    now = datetime.now(UTC)
    folder = project / "memory"

    def old(name: str, days: int, importance: float, n: int) -> Path:
        return write_memory(
            folder,
            name,
            id=f"20240101-00000{n}-00000{n}",
            importance=importance,
            created_at=(now - timedelta(days=days)).isoformat(),
        )

    stale = old("stale-trivia", 90, 0.5, 1)
    kept_important = old("important-rule", 90, 3.0, 2)
    fresh = old("fresh-note", 2, 1.0, 3)
    used = old("weekly-runbook", 90, 1.0, 4)
    cli_json(capsys, "index")
    # a search hit counts as an access: the runbook was touched just now
    hits = cli_json(capsys, "search", "weekly runbook", "--mode", "keyword")["hits"]
    assert [Path(h["path"]).stem for h in hits] == ["weekly-runbook"]

    plan = cli_json(capsys, "prune", "--max-age", "60", "--dry-run")
    assert [Path(c["info"]["path"]).stem for c in plan["removed"]] == ["stale-trivia"]
    assert stale.is_file()
    code, out, _ = cli(capsys, "prune", "--max-age", "60", "--dry-run")
    assert code == 0 and "would remove: memory/note/stale-trivia.md" in out

    report = cli_json(capsys, "prune", "--max-age", "60")
    assert [Path(c["info"]["path"]).stem for c in report["removed"]] == ["stale-trivia"]
    assert not stale.exists() and kept_important.exists() and fresh.exists() and used.exists()
    assert cli_json(capsys, "search", "stale trivia", "--mode", "keyword")["hits"] == []

    report = cli_json(capsys, "prune", "--max-count", "1")
    removed = [Path(c["info"]["path"]).stem for c in report["removed"]]
    # importance 1 before 3; of the two importance-1 memories, the one untouched longer first
    assert removed == ["fresh-note", "weekly-runbook"]
    assert {p.stem for p in memory_files(folder)} == {"important-rule"}


def test_prune_needs_a_limit_and_says_so(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = cli(capsys, "prune")
    assert code == 1 and "--max-age" in err and "Traceback" not in err
    code, _, err = cli(capsys, "prune", "--max-count", "3", "--scope", "everywhere")
    assert code == 1 and "project, user, all" in err


def test_the_agent_tools_refuse_to_write_into_an_external_folder(
    project: Path, tmp_path: Path
) -> None:
    from engram.config import load_config
    from engram.memory import Memory
    from engram.tools.toolbox import Toolbox

    runbook = tmp_path / "team-notes/runbooks/on-call.md"
    before = runbook.read_bytes()
    with Memory.open(load_config(start=project)) as memory:
        memory.index()
        tools = Toolbox(memory)
        result = tools.call("memory_forget", {"id": runbook.as_posix()})
        assert not result.ok and "only reads" in result.text
        escape = tools.call("memory_store", {"content": "x y z", "path": runbook.as_posix()})
        assert not escape.ok and "refused" in escape.text
        read = tools.call("memory_get", {"path": runbook.as_posix()})
        assert read.ok and "replication lag" in read.text  # reading it is fine
    assert runbook.read_bytes() == before


# --------------------------------------------------------------------------- history, restore


def test_history_shows_every_wording_and_restore_brings_one_back(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    first = cli_json(capsys, "remember", "Releases are tagged from main.")
    code, out, _ = cli(capsys, "remember", "releases are tagged from MAIN")
    assert code == 0 and out.startswith(f"updated {first['id']}") and "earlier wording" in out
    code, out, _ = cli(capsys, "history", first["id"])
    assert code == 0
    assert out.index("Releases are tagged from main.") < out.index("releases are tagged from MAIN")
    assert "revision 1 (merged)" in out and "engram restore ID" in out
    code, out, _ = cli(capsys, "restore", first["id"], "--revision", "1")
    assert code == 0 and out.startswith(f"restored {first['id']}")
    hits = cli_json(capsys, "search", "releases tagged", "--mode", "keyword")["hits"]
    assert [h["text"].strip() for h in hits] == ["Releases are tagged from main."]
    code, out, err = cli(capsys, "restore", first["id"], "--revision", "7")
    assert code == 1 and "between 1 and 2" in err and "Traceback" not in err + out
    code, _, err = cli(capsys, "restore", "20990101-000000-abcdef")
    assert code == 1 and "no memory with id" in err


def test_a_restored_memory_and_its_superseder_are_both_listed_newest_first_with_a_note(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    old = cli_json(capsys, "remember", "The API listens on port 8001.", "--type", "project-config")
    new = cli_json(capsys, "remember", "The API listens on port 8002.", "--type", "project-config")
    assert new["superseded"] == [old["id"]]
    code, out, _ = cli(capsys, "restore", old["id"])
    assert code == 0 and f"(conflicts with {new['id']})" in out
    code, out, _ = cli(capsys, "list", "--type", "project-config")
    lines = out.splitlines()
    assert code == 0 and [new["id"] in lines[0], old["id"] in lines[1]] == [True, True]
    assert f"(conflicts with an older memory: {old['id']})" in lines[0]
    assert "conflicts with an older" not in lines[1]
    code, out, _ = cli(capsys, "recall", "--query", "API listens port")
    assert code == 0 and f"(conflicts with an older memory: {old['id']})" in out
    assert out.index("port 8002") < out.index("port 8001")
