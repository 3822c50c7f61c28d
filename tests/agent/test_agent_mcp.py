"""The MCP server through the official SDK's own client: over stdio (``engram mcp`` as an agent
launches it), in process, and over streamable HTTP on loopback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp_types import CallToolResult

from agent_support import wait_until
from engram.cli import main
from engram.mcp import build_server
from engram.tools.toolbox import TOOLS, Toolbox
from support import MemoryFactory, write_vault

CONFIG = '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "engram.toml").write_text(CONFIG, encoding="utf-8")
    write_vault(tmp_path, {"notes/deploy.md": "# Deploy\n\nRoll back with make rollback.\n"})
    return tmp_path


def _child_env() -> dict[str, str]:
    """This test's isolated environment (ENGRAM_USER_CONFIG), loading only the store it uses."""
    return {**os.environ, "ENGRAM_LOAD_PLUGINS": "engram-sqlite"}


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _round_trip(client: Client) -> None:
    """Store → search → get → forget → search finds nothing, all through the protocol."""
    listing = await client.list_tools()
    assert {t.name for t in listing.tools} == set(TOOLS)
    for tool in listing.tools:
        assert tool.input_schema == TOOLS[tool.name].input.model_json_schema()
        assert tool.output_schema == TOOLS[tool.name].output_schema()

    stored = await client.call_tool(
        "memory_store",
        {
            "content": "Production deploys happen on Tuesdays after the change review.",
            "title": "Deploy day",
            "type": "decision",
            "tags": ["ops"],
        },
    )
    assert not stored.is_error, _text(stored)
    memory_id = stored.structured_content["id"]
    path = stored.structured_content["path"]
    assert path == "memory/decision/deploy-day.md"

    found = await client.call_tool("memory_search", {"query": "production deploys tuesdays"})
    assert not found.is_error, _text(found)
    hits = found.structured_content["results"]
    assert hits and hits[0]["path"] == path and hits[0]["type"] == "decision"
    assert path in _text(found)

    got = await client.call_tool("memory_get", {"path": path})
    assert not got.is_error and "Tuesdays after the change review" in got.structured_content["text"]

    gone = await client.call_tool("memory_forget", {"id": memory_id})
    assert not gone.is_error and gone.structured_content["removed"] == [path]

    after = await client.call_tool("memory_search", {"query": "production deploys tuesdays"})
    assert not after.is_error and after.structured_content["results"] == []
    missing = await client.call_tool("memory_get", {"path": path})
    assert missing.is_error


def test_stdio_server_round_trip_with_the_sdk_client(project: Path) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "engram", "mcp"],
        cwd=str(project),
        env=_child_env(),
    )

    async def main() -> None:
        async with Client(params, read_timeout_seconds=60) as client:
            await _round_trip(client)

    anyio.run(main)
    assert not (project / "memory" / "decision" / "deploy-day.md").exists()


def test_errors_come_back_as_tool_errors_and_the_session_goes_on(
    tmp_path: Path, open_memory: MemoryFactory
) -> None:
    write_vault(tmp_path, {"notes/a.md": "# A\n\nalpha\n"})
    server = build_server(Toolbox(open_memory()))
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("no_such_tool", {}, "unknown tool"),
        ("memory_search", {"query": ""}, "invalid arguments"),
        ("memory_search", {"query": "x", "limit": "many"}, "limit"),
        ("memory_get", {"path": "../../etc/passwd"}, "refused"),
        ("memory_get", {"path": "/etc/passwd"}, "refused"),
        ("memory_get", {"path": "notes\\..\\..\\x.md"}, "refused"),
        ("memory_store", {"content": "<private>only secret</private>"}, "empty"),
        ("memory_forget", {"id": "20240101-000000-abcdef"}, "no memory with id"),
        ("memory_list", {"since": "yesterday"}, "since"),
    ]

    async def main() -> None:
        async with Client(server) as client:
            for name, arguments, message in calls:
                result = await client.call_tool(name, arguments)
                assert result.is_error, (name, arguments)
                assert message in _text(result), _text(result)
            still = await client.call_tool("memory_stats", {})
            assert not still.is_error and still.structured_content["documents"] == 0

    anyio.run(main)


def test_in_process_round_trip(tmp_path: Path, open_memory: MemoryFactory) -> None:
    memory = open_memory()
    server = build_server(Toolbox(memory))

    async def main() -> None:
        async with Client(server) as client:
            await _round_trip(client)

    anyio.run(main)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


@pytest.fixture
def http_server(project: Path) -> Iterator[str]:
    port = _free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "engram", "mcp", "--http", "--port", str(port)],
        cwd=project,
        env=_child_env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: _accepts(port) or proc.poll() is not None, timeout=60, what="the server")
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stderr:
            proc.stderr.close()


def test_streamable_http_on_loopback(http_server: str) -> None:
    async def main() -> None:
        async with Client(http_server) as client:
            await _round_trip(client)

    anyio.run(main)


def test_http_refuses_a_non_loopback_address(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    assert main(["mcp", "--http", "--host", "0.0.0.0"]) == 1
    assert "loopback" in capsys.readouterr().err
    assert main(["mcp", "--http", "--host", "192.168.1.10"]) == 1
