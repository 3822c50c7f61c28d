"""Two machines, one server store, nothing lost: two project folders (two origins) index notes
and remember a decision on one real server; B finds A's note and reads it with ``engram get``;
with A's folder gone, B's ``rebuild``, ``index``, ``prune`` and ``reset`` leave every one of A's
documents found, byte for byte; ``export --origin A`` gives A's memory files back. Every step is
a real ``engram`` subprocess against a real server (``team_servers.py``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from team_servers import TeamServer

ENGRAM = Path(sys.executable).parent / "engram"
DECISION_A = "We decided the billing service keeps its ledger in PostgreSQL."
DECISION_B = "We decided releases are cut from the main branch every Thursday."
NOTE_A = (
    "# Deploys\n\nDeploys of the payments gateway use a blue-green switch at the load balancer.\n"
)
NOTE_B = "# Deploys\n\nThe search cluster is rolled node by node, never all at once.\n"
# A's readable name carries SQL and path characters: it must only ever be data.
NAME_A = "alice's laptop'); DROP TABLE chunks; --/../x"
NOTE_A2 = "# Runbook\n\nWhen the ledger queue backs up, drain it with the replay worker first.\n"


def engram(root: Path, *args: str, ok: bool = True) -> subprocess.CompletedProcess[str]:
    run = subprocess.run(
        [str(ENGRAM), *args], cwd=root, capture_output=True, text=True, timeout=600, check=False
    )
    if ok:
        assert run.returncode == 0, f"engram {' '.join(args)}: {run.stdout}{run.stderr}"
    return run


def project(root: Path, server: TeamServer, name: str, notes: dict[str, str]) -> Path:
    root.mkdir(parents=True)
    for path, text in notes.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    (root / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n'
        f'[origin]\nname = "{name}"\n' + server.store_toml(),
        encoding="utf-8",
    )
    return root


def search(root: Path, query: str) -> list[dict[str, Any]]:
    out = engram(root, "search", query, "--json", "--limit", "20", "--mode", "keyword")
    hits: list[dict[str, Any]] = json.loads(out.stdout)["hits"]
    return hits


def texts_of(root: Path, query: str, origin_name: str | None) -> list[str]:
    """Hit texts of one origin (``None``: the searching vault's own, which carry no origin)."""
    return sorted(
        h["text"] for h in search(root, query) if h["metadata"].get("origin_name") == origin_name
    )


@pytest.mark.parametrize("kind", ["chroma", "postgres"])
def test_two_machines_share_a_server_and_never_erase_each_other(
    kind: str, team_server: Any, tmp_path: Path
) -> None:
    server: TeamServer = team_server(kind)
    a = project(
        tmp_path / "a",
        server,
        NAME_A,
        {"notes/deploy.md": NOTE_A, "notes/runbook.md": NOTE_A2},
    )
    b = project(tmp_path / "b", server, "bob-desktop", {"notes/deploy.md": NOTE_B})
    for root, decision in ((a, DECISION_A), (b, DECISION_B)):
        engram(root, "index")
        engram(root, "remember", decision, "--type", "decision")

    # The same path on two machines is two documents; B finds A's note and reads it.
    hits = [h for h in search(b, "blue-green load balancer") if "blue-green" in h["text"]]
    assert hits, "B does not find A's note"
    a_note = hits[0]
    assert a_note["metadata"]["origin_name"] == NAME_A
    assert a_note["path"].endswith(":notes/deploy.md")
    shown = engram(b, "get", a_note["path"]).stdout
    assert "blue-green switch at the load balancer" in shown
    assert [h["text"] for h in search(b, "rolled node by node") if "rolled" in h["text"]], (
        "B's own note of the same path was overwritten by A's"
    )
    stats = json.loads(engram(b, "stats", "--json").stdout)
    assert set(stats["origins"]) == {NAME_A, "bob-desktop"}
    assert stats["origins"][NAME_A]["documents"] == 3  # two notes and a memory
    assert stats["origins"]["bob-desktop"]["this_vault"] is True

    assert texts_of(b, "rolled", None), "B does not find its own note"
    before = {q: texts_of(b, q, NAME_A) for q in ("blue-green", "ledger", "replay")}
    assert all(before.values()), before

    # A's folder is out of reach; B does everything that removes or rewrites.
    shutil.move(a, tmp_path / "a-elsewhere")
    for args in (
        ("rebuild",),
        ("index",),
        ("prune", "--max-age", "0"),
        ("forget", a_note["path"]),
        ("reset", "--yes"),
    ):
        run = engram(b, *args, ok=args[0] != "forget")
        if args[0] == "forget":  # another machine's document: refused in one line
            assert run.returncode == 1 and "only that machine" in run.stderr, run.stderr
            assert "Traceback" not in run.stderr
        after = {q: texts_of(b, q, NAME_A) for q in before}
        assert after == before, f"after `engram {' '.join(args)}` A's documents changed"
    assert not texts_of(b, "rolled", None), "reset left B's own documents"

    # A's machine is lost: its memories come back as markdown from the server.
    c = tmp_path / "c"
    c.mkdir()
    (c / "engram.toml").write_text('[embedder]\nprovider = "hash"\n', encoding="utf-8")
    exported = tmp_path / "a.jsonl"
    engram(b, "export", "--origin", NAME_A, "-o", str(exported))
    engram(c, "import", str(exported))
    original = sorted((tmp_path / "a-elsewhere" / "memory").rglob("*.md"))
    restored = sorted((c / "memory").rglob("*.md"))
    assert [p.relative_to(tmp_path / "a-elsewhere") for p in original] == [
        p.relative_to(c) for p in restored
    ]
    for old, new in zip(original, restored, strict=True):
        assert new.read_bytes() == old.read_bytes()
