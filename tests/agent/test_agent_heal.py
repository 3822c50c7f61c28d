"""Long-lived processes outlive what happens to their index: ``engram mcp`` (driven by the
``mcp`` SDK's client over stdio), the dashboard's API and ``engram watch`` keep running when the
index under them is cut short, replaced, damaged deep down or deleted; their next answer comes
from a healed index that holds the vault's files, writes they report were made are found, and
nothing is written into a file that is gone."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult
from starlette.testclient import TestClient

from agent_support import capture_finished, wait_until
from engram.dashboard.app import build_app
from engram.dashboard.data import DashboardData
from index_damage import KINDS, damage, index_of
from support import MemoryFactory, write_vault

CONFIG = '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n'
NOTES: dict[str, str | bytes] = {
    "notes/pump.md": "# Pump\n\nThe zebracorn pump restarts with make pump-restart.\n",
    "notes/deploy.md": "# Deploy\n\nRoll back with make rollback.\n",
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "engram.toml").write_text(CONFIG, encoding="utf-8")
    write_vault(tmp_path, NOTES)
    return tmp_path


def _env() -> dict[str, str]:
    return {**os.environ, "ENGRAM_LOAD_PLUGINS": "engram-sqlite"}


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


def _cli_search(root: Path, query: str) -> str:
    found = subprocess.run(
        [sys.executable, "-m", "engram", "search", query, "--json"],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert found.returncode == 0, found.stderr
    return found.stdout


@pytest.mark.parametrize("kind", KINDS)
def test_the_mcp_server_stays_up_and_answers_from_a_healed_index(project: Path, kind: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp"], cwd=str(project), env=_env()
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=120) as client:
            before = await client.call_tool(
                "memory_store", {"content": "Deploys go out on Tuesdays after the review."}
            )
            assert not before.is_error, _text(before)
            warm = await client.call_tool("memory_search", {"query": "zebracorn pump"})
            assert not warm.is_error, _text(warm)

            damage(project, kind, _env())

            after = await client.call_tool(
                "memory_store", {"content": "Backups of the ledger run at midnight."}
            )
            assert not after.is_error, _text(after)
            stored = after.structured_content
            assert stored is not None
            assert (project / stored["path"]).is_file()
            for query, path in [
                ("zebracorn pump restart", "notes/pump.md"),
                ("ledger backups midnight", stored["path"]),
                ("deploys tuesdays review", before.structured_content["path"]),
            ]:
                found = await client.call_tool("memory_search", {"query": query})
                assert not found.is_error, _text(found)
                paths = [hit["path"] for hit in found.structured_content["results"]]
                assert path in paths, (query, paths)

    anyio.run(main)
    # The server wrote into the index at the path, not into a file that is gone or aside.
    assert "backups-of-the-ledger" in _cli_search(project, "ledger backups midnight")
    assert index_of(project).is_file()
    if kind in ("truncated", "deeply damaged"):
        assert list(index_of(project).parent.glob("index.sqlite.corrupt-*")), "kept aside"


@pytest.mark.parametrize("kind", KINDS)
def test_the_dashboard_api_answers_from_a_healed_index(
    project: Path, open_memory: MemoryFactory, kind: str
) -> None:
    memory = open_memory()
    memory.index()
    memory.remember("Deploys go out on Tuesdays after the review.")
    data = DashboardData(memory)
    app = build_app(data)
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        assert client.get("/api/search", params={"q": "zebracorn pump"}).status_code == 200
        damage(project, kind, _env())
        found = client.get("/api/search", params={"q": "zebracorn pump restart"})
        assert found.status_code == 200, found.text
        assert "notes/pump.md" in [h["path"] for h in found.json()["hits"]]
        health = client.get("/api/health").json()
        assert health["documents"] == len(NOTES) + 1, health
        listed = client.get("/api/memories").json()["memories"]
        assert [m["title"] for m in listed] == ["Deploys go out on Tuesdays after the review."]
    if data.memory is not memory:  # the one the keeper opened when it healed the index
        data.memory.close()


class _Lines:
    """A child's output, read on a thread so the test can wait on a line."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            self.lines.append(line.rstrip("\n"))

    def has(self, text: str, start: int = 0) -> bool:
        return any(text in line for line in self.lines[start:])


@pytest.fixture
def watching(project: Path) -> Iterator[tuple[subprocess.Popen[str], _Lines, _Lines]]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "watch", "--debounce-ms", "200"],
        cwd=project,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out, err = _Lines(proc.stdout), _Lines(proc.stderr)
    try:
        wait_until(lambda: err.has("watching for changes"), 120, "the watcher to start")
        yield proc, out, err
    finally:
        proc.terminate()
        proc.wait(60)


@pytest.mark.parametrize("kind", KINDS)
def test_watch_heals_the_index_and_goes_on(
    project: Path, watching: tuple[subprocess.Popen[str], _Lines, _Lines], kind: str
) -> None:
    proc, out, err = watching
    damage(project, kind, _env())
    seen = len(out.lines)
    (project / "notes" / "new.md").write_text(
        "# Ferry\n\nThe quokka ferry leaves at noon.\n", encoding="utf-8"
    )

    def ran() -> bool:
        return any(line.startswith("vault:") for line in out.lines[seen:])

    wait_until(ran, 120, "the watcher to index the new note")
    assert proc.poll() is None, err.lines
    assert not [line for line in out.lines[seen:] if "damaged" in line or "error" in line]
    if kind in ("truncated", "deeply damaged"):
        assert list(index_of(project).parent.glob("index.sqlite.corrupt-*")), err.lines
    for query, path in [("quokka ferry noon", "notes/new.md"), ("zebracorn pump", "pump.md")]:
        assert path in _cli_search(project, query), query


def _cli(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engram", *args],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_deleted_index_is_made_again_by_the_next_command_not_left_empty(project: Path) -> None:
    assert _cli(project, "index").returncode == 0
    for path in index_of(project).parent.glob("index.sqlite*"):
        path.unlink()
    found = _cli(project, "search", "zebracorn pump", "--json")
    assert found.returncode == 0, found.stderr
    assert "notes/pump.md" in found.stdout, found.stdout
    [line] = found.stderr.strip().splitlines()
    assert line.startswith("engram: warning: the index was missing"), line


def test_a_deeply_damaged_index_is_healed_and_remember_keeps_the_memory(project: Path) -> None:
    assert _cli(project, "index").returncode == 0
    assert _cli(project, "remember", "Deploys go out on Tuesdays.").returncode == 0
    damage(project, "deeply damaged", _env())
    kept = _cli(project, "remember", "Backups of the ledger run at midnight.")
    assert kept.returncode == 0, kept.stderr
    assert "Traceback" not in kept.stderr
    assert "moved aside" in kept.stderr, kept.stderr
    assert list(index_of(project).parent.glob("index.sqlite.corrupt-*"))
    assert (project / "memory" / "note" / "backups-of-the-ledger-run-at-midnight.md").is_file()
    for query, path in [
        ("ledger backups midnight", "backups-of-the-ledger"),
        ("zebracorn pump", "notes/pump.md"),
        ("deploys tuesdays", "deploys-go-out-on-tuesdays"),
    ]:
        assert path in _cli_search(project, query), query


def test_a_hooks_capture_heals_a_deeply_damaged_index(project: Path) -> None:
    assert _cli(project, "remember", "Deploys go out on Tuesdays.").returncode == 0
    damage(project, "deeply damaged", _env())
    (project / "notes" / "new.md").write_text("# Ferry\n\nThe quokka ferry.\n", encoding="utf-8")
    hook = _cli(project, "hooks", "run", "session-end")
    assert hook.returncode == 0, hook.stderr
    capture_finished(project, "session-end")
    log = (project / ".engram" / "capture.log").read_text(encoding="utf-8")
    assert "capture failed" not in log, log
    assert list(index_of(project).parent.glob("index.sqlite.corrupt-*")), log
    assert "notes/new.md" in _cli_search(project, "quokka ferry")
