"""A Chroma collection on a server that is damaged (engram's identity record stripped, the
metadata of its records overwritten with garbage, the server's own record of the collection's
vector segment gone) is not on this machine to move aside: search and index say, in one line,
which server and collection, that engram deleted nothing there, and that ``engram rebuild``
recreates it (and what that costs); the session-start hook still gives its block (it reads the
markdown). ``engram rebuild`` then makes it whole again. The server is a real ``chroma run``; the
commands are real subprocesses of ``engram``. A server that is down keeps its own "cannot
reach" message."""

from __future__ import annotations

import os
import socket
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import httpx
import pytest
from chromadb.api import ClientAPI

from agent_support import capture_finished, wait_until
from support import note, write_vault

ENGRAM = Path(sys.executable).parent / "engram"
CHROMA = Path(sys.executable).parent / "chroma"
NOTES = 12
MEMORY = "Deploys go out on Tuesdays after the change review."


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def answers(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


class Server:
    """A real ``chroma run`` on loopback, stopped and started again by a test."""

    def __init__(self, data: Path) -> None:
        self.data = data
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [CHROMA, "run", "--path", self.data, "--host", "127.0.0.1", "--port", str(self.port)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
        )
        wait_until(lambda: answers(self.port), 120, "chroma run to answer")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=60)
            self.process = None

    def client(self) -> ClientAPI:
        settings = chromadb.config.Settings(anonymized_telemetry=False)
        return chromadb.HttpClient(host="127.0.0.1", port=self.port, settings=settings)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = Server(tmp_path_factory.mktemp("chroma") / "data")
    running.start()
    yield running
    running.stop()


def engram(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(ENGRAM), *args], cwd=root, capture_output=True, text=True, timeout=600, check=False
    )


def make_project(root: Path, port: int) -> tuple[Path, str]:
    collection = f"c{uuid.uuid4().hex[:12]}"
    write_vault(root, {f"notes/n{i:02}.md": note(i) for i in range(NOTES)})
    (root / "engram.toml").write_text(
        '[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n'
        f'[store]\nbackend = "chroma"\nmode = "server"\nport = {port}\n'
        f'collection = "{collection}"\n',
        encoding="utf-8",
    )
    for args in (("remember", MEMORY), ("index",)):
        run = engram(root, *args)
        assert run.returncode == 0, run.stderr
    return root, collection


def contents(client: ClientAPI, collection: str) -> dict[str, Any]:
    """Every record of the three collections (ids and metadata): what must not change."""
    out: dict[str, Any] = {}
    for name in (collection, f"{collection}__engram_meta", f"{collection}__engram_log"):
        got = client.get_collection(name, embedding_function=None).get(include=["metadatas"])
        metas = [sorted((m or {}).items()) for m in got["metadatas"] or []]
        out[name] = sorted(zip(got["ids"], map(repr, metas), strict=True))
    return out


def damage(client: ClientAPI, collection: str, how: str) -> None:
    if how == "identity stripped":
        meta = client.get_collection(f"{collection}__engram_meta", embedding_function=None)
        stripped: Any = {"engram:identity": None, "engram:kind": None, "note": "edited"}
        meta.update(ids=["identity"], metadatas=[stripped])
    elif how == "record metadata garbage":  # of every chunk and document record
        for name in (collection, f"{collection}__engram_meta"):
            records = client.get_collection(name, embedding_function=None)
            ids = [i for i in records.get(include=[])["ids"] if i != "identity"]
            records.update(ids=ids, metadatas=[{"engram:json": "{garbage"} for _ in ids])


def one_damage_line(run: subprocess.CompletedProcess[str], port: int, collection: str) -> str:
    assert run.returncode == 1, (run.stdout, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert f"http://127.0.0.1:{port} (collection '{collection}') is damaged" in line, line
    assert "cannot be rebuilt locally because it lives on a Chroma server" in line, line
    assert "deletes nothing there" in line and "`engram rebuild`" in line, line
    assert "embedded again" in line and "Traceback" not in run.stderr, line
    return line


def rebuilt_and_found(root: Path) -> None:
    rebuilt = engram(root, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert f"{NOTES + 1} new" in rebuilt.stdout, rebuilt.stdout
    found = engram(root, "search", "postgres replication", "--json")
    assert found.returncode == 0 and found.stderr.strip() == "", found.stderr
    assert "notes/n00.md" in found.stdout, found.stdout
    hook = engram(root, "hooks", "run", "session-start", "--host", "claude-code")
    assert hook.returncode == 0 and "Tuesdays" in hook.stdout, hook.stderr


@pytest.mark.parametrize("how", ["identity stripped", "record metadata garbage"])
def test_a_damaged_collection_is_named_left_alone_and_rebuilt_on_request(
    server: Server, tmp_path: Path, how: str
) -> None:
    root, collection = make_project(tmp_path / "p", server.port)
    client = server.client()
    damage(client, collection, how)
    before = contents(client, collection)
    # An edited note makes index read the damaged collection too.
    (root / "notes" / "n00.md").write_text(note(0) + "\nThe zebracorn runbook.\n", encoding="utf-8")
    markdown = {p: p.read_bytes() for p in root.rglob("*.md")}

    one_damage_line(engram(root, "search", "postgres replication"), server.port, collection)
    one_damage_line(engram(root, "index"), server.port, collection)
    hook = engram(root, "hooks", "run", "session-start", "--host", "claude-code")
    # The session-start block lists memories from the markdown without reading a chunk.
    assert hook.returncode == 0 and "Tuesdays" in hook.stdout, hook.stderr
    assert "Traceback" not in hook.stderr
    capture_finished(root)  # the detached capture the hook started wrote nothing either
    assert contents(client, collection) == before, "nothing on the server was changed"
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == markdown

    rebuilt_and_found(root)


def test_a_collection_whose_segment_the_server_lost_is_damaged_not_down(
    tmp_path: Path,
) -> None:
    own = Server(tmp_path / "server-data")
    own.start()
    try:
        root, collection = make_project(tmp_path / "p", own.port)
        own.stop()
        # What the server stores: its record of the chunk collection's vector segment.
        with sqlite3.connect(own.data / "chroma.sqlite3") as db:
            db.execute(
                "DELETE FROM segments WHERE scope = 'VECTOR' AND collection = "
                "(SELECT id FROM collections WHERE name = ?)",
                (collection,),
            )
        own.start()
        names = sorted(c.name for c in own.client().list_collections())
        line = one_damage_line(engram(root, "search", "postgres replication"), own.port, collection)
        assert "segment" in line, line
        assert sorted(c.name for c in own.client().list_collections()) == names
        rebuilt_and_found(root)
    finally:
        own.stop()
    down = engram(root, "search", "postgres replication")
    assert down.returncode == 1 and "Traceback" not in down.stderr, down.stderr
    assert "cannot reach the Chroma server" in down.stderr and "damaged" not in down.stderr
