"""OpenCode 1.2+ sessions from ``opencode.db`` (a fixture built with OpenCode's schema, see
``opencode_fixture``), through the real CLI (``engram sessions --json``) on a real SQLite store:
this project's sessions only, incrementally, readable while OpenCode's writer holds the WAL,
the older JSON tree still read, and a session in both read once."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_support import OPENCODE_FIXTURE
from engram.config import load_config
from engram.memory import Memory
from opencode_fixture import OpenCodeDb, reasoning, step_start, text, tool

ENGRAM = Path(sys.executable).parent / "engram"
PREFERENCE = "I prefer pnpm over npm for every package in the shop."


def sessions(root: Path) -> dict[str, Any]:
    """``engram sessions --json`` in ``root``, as a user runs it; its report."""
    proc = subprocess.run(
        [str(ENGRAM), "sessions", "--json"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    report: dict[str, Any] = json.loads(proc.stdout)
    return report


def documents(root: Path) -> dict[str, str]:
    """Indexed session documents of the project → their text (turns joined)."""
    with Memory.open(load_config(start=root)) as memory:
        docs = [d for d in memory.store.list_documents() if d.startswith("sessions/")]
        chunks = [c for batch in memory.store.iter_chunks() for c in batch]
    return {d: "\n".join(c.text for c in chunks if c.document_id == d) for d in docs}


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, OpenCodeDb]:
    """Two projects (shop, ops) and an OpenCode data folder whose database holds sessions of
    both; the shop project indexes sessions from it."""
    shop, ops = tmp_path / "code" / "shop", tmp_path / "code" / "ops"
    for folder in (shop / "web", ops):
        folder.mkdir(parents=True)
    data = tmp_path / "opencode"
    db = OpenCodeDb.create(data / "opencode.db")
    db.session("ses_shop_1", shop, "Package manager")
    db.message("ses_shop_1", "user", text(PREFERENCE))
    db.message(
        "ses_shop_1",
        "assistant",
        step_start(),
        reasoning("zebra reasoning that stays out"),
        tool("cat package.json", "walrus tool output that stays out"),
        text("Noted: pnpm it is."),
        text("marmot synthetic context", synthetic=True),
    )
    db.session("ses_shop_web", shop / "web", "Web bundle")
    db.message("ses_shop_web", "user", text("The web bundle is built with Vite in the shop."))
    db.session("ses_ops_1", ops, "Deploys")
    db.message("ses_ops_1", "user", text("Deploy on Fly.io and use yarn over npm."))
    (shop / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[store]\nbackend = "sqlite"\n'
        f'[sessions]\nagents = ["opencode"]\ndirs = {{opencode = "{data.as_posix()}"}}\n',
        encoding="utf-8",
    )
    return shop, data, db


def test_only_this_projects_sessions_are_indexed_with_text_parts_only(
    world: tuple[Path, Path, OpenCodeDb],
) -> None:
    shop, _, _ = world
    report = sessions(shop)
    assert report["new"] == 2 and not report["skipped"], report
    docs = documents(shop)
    assert sorted(docs) == ["sessions/opencode/ses_shop_1", "sessions/opencode/ses_shop_web"]
    assert PREFERENCE in docs["sessions/opencode/ses_shop_1"]
    assert "pnpm it is" in docs["sessions/opencode/ses_shop_1"]
    everything = "\n".join(docs.values())
    for noise in ("zebra", "walrus", "marmot", "Fly.io", "yarn"):
        assert noise not in everything


def test_indexing_is_incremental_and_reads_past_a_writer_holding_the_wal(
    world: tuple[Path, Path, OpenCodeDb],
) -> None:
    shop, _, db = world
    assert sessions(shop)["new"] == 2
    again = sessions(shop)
    assert (again["new"], again["changed"], again["unchanged"]) == (0, 0, 2)
    writer = db.connect()  # OpenCode, mid-write: a transaction open on the WAL
    try:
        writer.execute("BEGIN IMMEDIATE")
        writer.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) "
            "VALUES ('msg_pending', 'ses_shop_1', ?, ?, ?)",
            (db.tick(), db.clock, json.dumps({"role": "user", "time": {"created": db.clock}})),
        )
        writer.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
            "VALUES ('prt_pending', 'msg_pending', 'ses_shop_1', ?, ?, ?)",
            (db.clock, db.clock, json.dumps(text("Uncommitted words about ocelots."))),
        )
        during = sessions(shop)  # never blocked, never sees half a write
        assert (during["changed"], during["unchanged"]) == (0, 2), during
        writer.execute("COMMIT")
    finally:
        writer.close()
    after = sessions(shop)
    assert (after["changed"], after["unchanged"]) == (1, 1), after
    assert "ocelots" in documents(shop)["sessions/opencode/ses_shop_1"]


def test_the_database_is_opened_read_only(world: tuple[Path, Path, OpenCodeDb]) -> None:
    shop, data, _ = world
    before = {p.name: p.read_bytes() for p in data.iterdir() if p.name == "opencode.db"}
    sessions(shop)
    assert {p.name: p.read_bytes() for p in data.iterdir() if p.name == "opencode.db"} == before


def test_the_legacy_tree_is_read_too_and_a_session_in_both_is_read_once(
    world: tuple[Path, Path, OpenCodeDb],
) -> None:
    shop, data, db = world
    shutil.copytree(OPENCODE_FIXTURE, data / "storage")
    # ses_alpha moved into the database (as OpenCode's migration did); ses_beta did not.
    db.session("ses_alpha", Path("/home/me/shop"), "Fix checkout coupon bug")
    db.message("ses_alpha", "user", text("The checkout page crashes when the cart has a coupon."))
    toml = shop / "engram.toml"
    toml.write_text(toml.read_text(encoding="utf-8") + 'scope = "all"\n', encoding="utf-8")
    report = sessions(shop)
    docs = documents(shop)
    assert sorted(docs) == [
        "sessions/opencode/ses_alpha",
        "sessions/opencode/ses_beta",
        "sessions/opencode/ses_ops_1",
        "sessions/opencode/ses_shop_1",
        "sessions/opencode/ses_shop_web",
    ]
    assert report["new"] == 5
    # The database's copy of ses_alpha, not the tree's (which has more turns).
    assert "coupon discount is applied twice" not in docs["sessions/opencode/ses_alpha"]


def test_the_legacy_tree_alone_is_scoped_to_the_project(tmp_path: Path) -> None:
    data = tmp_path / "opencode"
    shutil.copytree(OPENCODE_FIXTURE, data / "storage")
    shop = tmp_path / "shop"
    shop.mkdir()
    session_file = data / "storage" / "session" / "proj_shop" / "ses_alpha.json"
    info = json.loads(session_file.read_text(encoding="utf-8"))
    session_file.write_text(json.dumps({**info, "directory": str(shop)}), encoding="utf-8")
    (shop / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n'
        f'[sessions]\nagents = ["opencode"]\ndirs = {{opencode = "{data.as_posix()}"}}\n',
        encoding="utf-8",
    )
    assert sessions(shop)["new"] == 1
    assert list(documents(shop)) == ["sessions/opencode/ses_alpha"]
