"""``engram import`` takes only what ``remember`` and ``memory_store`` would write: an id engram
made, a memory small enough to index, a path with no private span, control character or
over-long name. A refused record is one warning that never prints a secret, and every other
record is imported and indexed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from engram.memories.files import memory_files
from support import cli, cli_json

SECRET = "PRIVIMP1XQ"


@pytest.fixture
def good(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    """One exported memory of a first project; the test then works in an empty second one."""
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "engram.toml").write_text(
            '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
        )
    monkeypatch.chdir(tmp_path / "a")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "a" / "xdg"))
    cli_json(capsys, "remember", "The ledger closes on Fridays.", "--type", "fact")
    code, out, _ = cli(capsys, "export")
    assert code == 0
    monkeypatch.chdir(tmp_path / "b")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "b" / "xdg"))
    record: dict[str, Any] = json.loads(out.splitlines()[0])
    return record


def _other(good: dict[str, Any], n: int, **changes: Any) -> dict[str, Any]:
    """Another memory like ``good``: a fresh id (in the record and its markdown), a new path."""
    new_id = f"20240101-00000{n}-abcde{n}"
    markdown = good["markdown"].replace(good["id"], new_id).replace("Fridays", f"day {n}")
    record = dict(good, id=new_id, path=f"fact/other-{n}.md", markdown=markdown)
    record.update(changes)
    return record


def _import(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], records: list[dict[str, Any]]
) -> tuple[dict[str, Any], str]:
    dump = tmp_path / "dump.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    code, out, err = cli(capsys, "import", str(dump), "--json")
    assert code == 0, err
    assert "Traceback" not in err
    code, _, text_err = cli(capsys, "import", str(dump))  # again, as text: one line a warning
    assert code == 0 and "Traceback" not in text_err
    return json.loads(out), text_err


def _names(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in memory_files(root / "memory"))


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        ({"path": f"fact/x-<private>{SECRET}</private>.md"}, "<private> tag"),
        ({"path": f"fact/x-<private>{SECRET}<.md"}, "<private> tag"),
        ({"path": "fact/two\nlines.md"}, "line break"),
        ({"path": "fact/tab\there.md"}, "control character"),
        ({"path": "fact/" + "n" * 300 + ".md"}, "too long"),
        ({"path": "fact/" + "é" * 150 + ".md"}, "too long"),
        ({"path": "../../escaped.md"}, "refused"),
    ],
)
def test_a_bad_path_is_refused_in_one_line_and_the_others_go_in(
    good: dict[str, Any],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    changes: dict[str, Any],
    reason: str,
) -> None:
    bad = _other(good, 1, **changes)
    report, err = _import(tmp_path, capsys, [good, bad, _other(good, 2)])
    assert len(report["created"]) == 2 and len(report["skipped"]) == 1
    assert reason in " ".join(report["warnings"])
    assert SECRET not in json.dumps(report) and SECRET not in err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and reason in warnings[0]
    assert _names(Path.cwd()) == ["memory/fact/other-2.md", f"memory/{good['path']}"]
    assert not any(SECRET in str(p) for p in tmp_path.rglob("*"))
    # The ones imported are indexed: search finds them.
    code, out, _ = cli(capsys, "search", "ledger closes on day 2", "--json")
    assert code == 0 and any(h["path"] == "memory/fact/other-2.md" for h in json.loads(out)["hits"])


@pytest.mark.parametrize(
    "bad_id", ["../../../pwn-id", f"<private>{SECRET}</private>", "x", "20240101-000000-ABCDEF"]
)
def test_an_id_engram_did_not_make_is_refused_without_printing_a_secret(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str], bad_id: str
) -> None:
    for in_record in (True, False):
        record = _other(good, 3)
        record["markdown"] = record["markdown"].replace(record["id"], json.dumps(bad_id))
        record["id"] = bad_id if in_record else None
        report, err = _import(tmp_path, capsys, [record, good])
        assert report["skipped"] == ["project:fact/other-3.md"], report
        assert "not an engram memory id" in " ".join(report["warnings"])
        assert SECRET not in json.dumps(report) and SECRET not in err
        assert _names(Path.cwd()) == [f"memory/{good['path']}"]


def test_a_memory_too_large_to_index_is_refused_with_the_limit(
    good: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big = _other(good, 4)
    big["markdown"] += "filler words " * 500_000  # 6.5 MB: over the 5 MB default
    report, _ = _import(tmp_path, capsys, [big, good])
    assert report["skipped"] == ["project:fact/other-4.md"]
    assert "max_file_bytes" in " ".join(report["warnings"])
    assert _names(Path.cwd()) == [f"memory/{good['path']}"]
