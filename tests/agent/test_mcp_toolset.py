"""The MCP tool set through the official SDK's client against a real ``engram mcp`` stdio process:
every tool listed with its annotations and called with good and bad arguments, memories as
resources, the two prompts, ``--read-only`` refusing every writing tool, and a memory another
process writes found by ``memory_search`` with no manual re-index."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult

from engram.tools.toolbox import READ_ONLY_TOOLS, TOOLS
from support import write_vault

CONFIG = '[embedder]\nprovider = "hash"\n\n[vault]\npaths = ["notes"]\n'
WAIT_CAP = 120.0  # generous: the machine is shared; the wait ends as soon as the hit shows


def _project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "engram.toml").write_text(CONFIG, encoding="utf-8")
    write_vault(root, {"notes/deploy.md": "# Deploy\n\nRoll back with make rollback.\n"})
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _project(tmp_path / "b")


def _env() -> dict[str, str]:
    """The test's isolated environment (its XDG_DATA_HOME and user config), only SQLite loaded."""
    return {**os.environ, "ENGRAM_LOAD_PLUGINS": "engram-sqlite"}


def _params(project: Path, *extra: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "engram", "mcp", *extra], cwd=str(project), env=_env()
    )


def _serve(project: Path, work: Callable[[Client], Awaitable[None]], *extra: str) -> None:
    async def main() -> None:
        async with Client(_params(project, *extra), read_timeout_seconds=180) as client:
            await work(client)

    anyio.run(main)


def _engram(cwd: Path, *args: str) -> dict[str, Any]:
    """``engram ARGS --json`` in another process; its JSON answer."""
    done = subprocess.run(
        [sys.executable, "-m", "engram", *args, "--json"],
        cwd=cwd,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


def _text(result: CallToolResult) -> str:
    return "\n".join(getattr(block, "text", "") for block in result.content)


async def _ok(client: Client, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(name, arguments)
    assert not result.is_error, (name, _text(result))
    assert result.structured_content is not None
    return dict(result.structured_content)


def test_every_tool_with_good_arguments_then_resources_and_prompts(project: Path) -> None:
    today = datetime.now(UTC).date()
    called: set[str] = set()

    async def work(client: Client) -> None:
        listing = (await client.list_tools()).tools
        assert len(listing) >= 15 and {t.name for t in listing} == set(TOOLS)
        for tool in listing:
            spec = TOOLS[tool.name]
            notes = tool.annotations
            assert notes is not None and notes.read_only_hint is spec.read_only
            assert notes.destructive_hint is spec.destructive
            assert notes.idempotent_hint is spec.idempotent and notes.title
            assert tool.description and "\n" not in tool.description
            assert len(tool.description) <= 320, tool.name
        assert TOOLS["memory_forget"].destructive and not TOOLS["memory_store"].idempotent

        async def ok(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            called.add(name)
            return await _ok(client, name, arguments)

        deploy = await ok(
            "memory_store",
            {
                "content": "Production deploys happen on Tuesdays after the change review.",
                "title": "Deploy day",
                "type": "decision",
                "tags": ["ops"],
            },
        )
        staging = await ok(
            "memory_store",
            {
                "content": "The staging database runs PostgreSQL 16 on port 5433.",
                "title": "Staging database",
                "type": "fact",
                "tags": ["db"],
            },
        )
        deploy_file = project / deploy["path"]

        # search with every filter: type, scope, tag, date range, source
        filters = {
            "type": "decision",
            "scope": "project",
            "tag": "ops",
            "since": str(today - timedelta(days=1)),
            "until": str(today + timedelta(days=1)),
            "source": "memory",
        }
        found = await ok("memory_search", {"query": "production deploys tuesdays", **filters})
        assert [h["path"] for h in found["results"]] == [deploy["path"]]
        other_tag = await ok("memory_search", {"query": "production deploys", "tag": "db"})
        assert deploy["path"] not in [h["path"] for h in other_tag["results"]]
        future = str(today + timedelta(days=30))
        later = await ok("memory_search", {"query": "production deploys", "since": future})
        assert later["results"] == []

        got = await ok("memory_get", {"path": deploy["path"]})
        assert "Tuesdays after the change review" in got["text"]

        first = await ok("memory_list", {"limit": 1})
        assert first["count"] == 1 and first["total"] == 2 and first["next_offset"] == 1
        second = await ok("memory_list", {"limit": 1, "offset": 1})
        assert second["next_offset"] is None
        assert {first["memories"][0]["id"], second["memories"][0]["id"]} == {
            deploy["id"],
            staging["id"],
        }
        assert (await ok("memory_list", {"tag": "db"}))["memories"][0]["id"] == staging["id"]

        # edit a span: the earlier wording stays, as a revision in the file
        edited = await ok(
            "memory_edit", {"id": deploy["id"], "old_text": "Tuesdays", "new_text": "Wednesdays"}
        )
        assert edited["action"] == "edited" and edited["revision_count"] == 1
        on_disk = deploy_file.read_text(encoding="utf-8")
        body = on_disk.split("---\n", 2)[2]
        assert "Wednesdays" in body and "Tuesdays" not in body
        assert "Production deploys happen on Tuesdays" in on_disk.split("---\n", 2)[1]
        moved_on = await ok("memory_search", {"query": "deploys wednesdays"})
        assert moved_on["results"][0]["path"] == deploy["path"]

        # edit the whole text, with tags
        rewritten = await ok(
            "memory_edit",
            {
                "id": staging["id"],
                "content": "The staging database runs PostgreSQL 17 on port 5433.",
                "tags": ["db", "staging"],
            },
        )
        assert rewritten["tags"] == ["db", "staging"]

        history = await ok("memory_history", {"id": deploy["id"]})
        revisions = [e for e in history["entries"] if e["kind"] == "revision"]
        assert revisions and "Tuesdays" in revisions[0]["wording"]
        assert revisions[0]["why"] == "edited"

        back = await ok("memory_restore", {"id": deploy["id"], "revision": 1})
        assert back["action"] == "restored"
        assert "Tuesdays" in deploy_file.read_text(encoding="utf-8").split("---\n", 2)[2]

        moved = await ok("memory_move", {"id": staging["id"], "to": "fact/staging-db.md"})
        assert moved["path"] == "memory/fact/staging-db.md"
        assert moved["moved_from"] == staging["path"] and moved["id"] == staging["id"]
        assert not (project / staging["path"]).exists()
        hits = (await ok("memory_search", {"query": "staging database PostgreSQL"}))["results"]
        paths = {h["path"] for h in hits}
        assert moved["path"] in paths and staging["path"] not in paths

        tags = await ok("memory_tags", {})
        assert {t["tag"] for t in tags["tags"]} == {"ops", "db", "staging"}

        recall = await ok("memory_recall", {"task": "plan the production deploy on tuesday"})
        assert "Tuesdays" in recall["text"]

        recent = await ok("memory_recent", {"limit": 50})
        kinds = {e["kind"] for e in recent["events"]}
        assert "memory written" in kinds or "memory updated" in kinds

        spent = await ok("memory_usage", {"days": 7, "by": ["day", "model"]})
        assert spent["total"]["requests"] == 0  # the hash embedder is local: nothing to pay

        stats = await ok("memory_stats", {})
        assert stats["memories"] == 2

        # the ChatGPT pair: one text item holding the documented JSON
        result = await client.call_tool("search", {"query": "staging database PostgreSQL"})
        called.add("search")
        assert not result.is_error and len(result.content) == 1
        answer = json.loads(_text(result))
        assert set(answer) == {"results"}
        item = next(r for r in answer["results"] if r["id"] == staging["id"])
        assert set(item) == {"id", "title", "url"}
        assert item["url"] == f"engram://memory/{staging['id']}"
        fetched = await client.call_tool("fetch", {"id": staging["id"]})
        called.add("fetch")
        doc = json.loads(_text(fetched))
        assert set(doc) == {"id", "title", "text", "url", "metadata"}
        assert "PostgreSQL 17" in doc["text"] and doc["metadata"]["type"] == "fact"
        note = json.loads(_text(await client.call_tool("fetch", {"id": "notes/deploy.md"})))
        assert "make rollback" in note["text"] and note["url"] == "engram://file/notes/deploy.md"

        # memories as resources
        resources = (await client.list_resources()).resources
        uris = {str(r.uri) for r in resources}
        assert {f"engram://memory/{deploy['id']}", f"engram://memory/{staging['id']}"} <= uris
        read = await client.read_resource(f"engram://memory/{deploy['id']}")
        assert "Tuesdays after the change review" in getattr(read.contents[0], "text", "")
        templates = (await client.list_resource_templates()).resource_templates
        assert {t.uri_template for t in templates} == {
            "engram://memory/{id}",
            "engram://file/{path}",
        }
        file = await client.read_resource("engram://file/notes/deploy.md")
        assert "make rollback" in getattr(file.contents[0], "text", "")

        # the two prompts
        prompts = (await client.list_prompts()).prompts
        assert {p.name for p in prompts} == {"recall", "summarize_session"}
        asked = await client.get_prompt("recall", {"task": "production deploy day"})
        assert "Tuesdays" in getattr(asked.messages[0].content, "text", "")
        summary = await client.get_prompt("summarize_session", {"focus": "the deploy"})
        text = getattr(summary.messages[0].content, "text", "")
        assert "memory_store" in text and "session-summary" in text

        gone = await ok("memory_forget", {"id": staging["id"]})
        assert gone["removed"] == [moved["path"]]
        assert not (project / moved["path"]).exists()

    _serve(project, work)
    assert called == set(TOOLS)


BAD_CALLS: list[tuple[str, dict[str, Any], str]] = [
    ("memory_search", {"query": "x", "since": "last week"}, "since"),
    ("memory_search", {"query": "x", "tag": "t" * 65}, "tag"),
    ("memory_store", {"content": "<private>only secret</private>"}, "empty"),
    ("memory_get", {"path": "../../etc/passwd"}, "refused"),
    ("memory_edit", {"id": "@ID", "old_text": "not in there", "new_text": "y"}, "does not occur"),
    ("memory_edit", {"id": "@ID"}, "nothing to change"),
    ("memory_edit", {"id": "@ID", "content": "a", "old_text": "b", "new_text": "c"}, "either"),
    ("memory_move", {"id": "@ID", "to": "../outside.md"}, "refused"),
    ("memory_move", {"id": "20240101-000000-abcdef", "to": "x.md"}, "no memory with id"),
    ("memory_forget", {"id": "20240101-000000-abcdef"}, "no memory with id"),
    ("memory_restore", {"id": "@ID", "revision": 9}, "revisions"),
    ("memory_list", {"offset": -1}, "offset"),
    ("memory_history", {"id": "nope"}, "no memory with id"),
    ("memory_recall", {"task": ""}, "task"),
    ("memory_tags", {"bogus": 1}, "unknown argument"),
    ("memory_recent", {"limit": 0}, "limit"),
    ("memory_usage", {"by": ["week"]}, "by"),
    ("memory_stats", {"x": 1}, "unknown argument"),
    ("search", {}, "query"),
    ("fetch", {"id": "/etc/passwd"}, "refused"),
    ("no_such_tool", {}, "unknown tool"),
]


def test_every_tool_with_bad_arguments_is_a_clear_tool_error(project: Path) -> None:
    assert {name for name, _, _ in BAD_CALLS} >= set(TOOLS)
    stored = _engram(project, "remember", "Backups run nightly at 02:00.", "--type", "fact")
    before = (project / stored["path"]).read_text(encoding="utf-8")

    async def work(client: Client) -> None:
        for name, arguments, message in BAD_CALLS:
            given = {k: stored["id"] if v == "@ID" else v for k, v in arguments.items()}
            result = await client.call_tool(name, given)
            text = _text(result)
            assert result.is_error, (name, given, text)
            assert message in text, (name, text)
            assert "Traceback" not in text and text.count("\n") < 5
        for uri in ("engram://memory/nope", "https://example.com/x", "engram://file/../x.md"):
            with pytest.raises(MCPError):
                await client.read_resource(uri)
        with pytest.raises(MCPError, match="task"):
            await client.get_prompt("recall", {})
        with pytest.raises(MCPError, match="unknown prompt"):
            await client.get_prompt("nope", {})
        with pytest.raises(MCPError, match="cursor"):
            await client.list_resources(cursor="minus one")
        still = await _ok(client, "memory_stats", {})  # the session goes on
        assert still["memories"] == 1

    _serve(project, work)
    assert (project / stored["path"]).read_text(encoding="utf-8") == before


def test_read_only_serves_reading_tools_and_refuses_every_write(project: Path) -> None:
    stored = _engram(project, "remember", "Backups run nightly at 02:00.", "--type", "fact")
    before = (project / stored["path"]).read_text(encoding="utf-8")
    writes = {name: tool for name, tool in TOOLS.items() if not tool.read_only}
    assert set(writes) == {
        "memory_store",
        "memory_edit",
        "memory_move",
        "memory_forget",
        "memory_restore",
    }
    good = {
        "memory_store": {"content": "Something new."},
        "memory_edit": {"id": stored["id"], "content": "Backups run hourly."},
        "memory_move": {"id": stored["id"], "to": "elsewhere.md"},
        "memory_forget": {"id": stored["id"]},
        "memory_restore": {"id": stored["id"]},
    }

    async def work(client: Client) -> None:
        listing = (await client.list_tools()).tools
        assert {t.name for t in listing} == READ_ONLY_TOOLS
        assert all(t.annotations and t.annotations.read_only_hint for t in listing)
        for name, arguments in good.items():
            result = await client.call_tool(name, arguments)
            assert result.is_error and "read-only" in _text(result), (name, _text(result))
        found = await _ok(client, "memory_search", {"query": "backups nightly"})
        assert found["results"][0]["path"] == stored["path"]
        summary = await client.get_prompt("summarize_session", {})
        assert "read-only" in getattr(summary.messages[0].content, "text", "")

    _serve(project, work, "--read-only")
    assert (project / stored["path"]).read_text(encoding="utf-8") == before
    assert sorted(p.name for p in (project / "memory").rglob("*.md")) == [
        "backups-run-nightly-at-02-00.md"
    ]


def test_a_memory_written_by_another_process_is_found_without_a_reindex(
    project: Path, tmp_path: Path
) -> None:
    other = _project(tmp_path / "a")
    waits: list[float] = []

    async def found(client: Client, query: str, path: str) -> None:
        """Poll memory_search until ``path`` is a hit (the elapsed time is reported, not
        asserted: the machine is shared)."""
        started = time.monotonic()
        while True:
            hits = (await _ok(client, "memory_search", {"query": query}))["results"]
            if path in [h["path"] for h in hits]:
                waits.append(time.monotonic() - started)
                return
            assert time.monotonic() - started < WAIT_CAP, f"{path} never found for {query!r}"
            await anyio.sleep(0.05)

    async def work(client: Client) -> None:
        first = await _ok(client, "memory_search", {"query": "kubernetes cluster"})
        assert first["results"] == []
        # a user memory written from another project: in the shared user folder, not in this
        # project's index until the server looks
        user = await anyio.to_thread.run_sync(
            lambda: _engram(
                other,
                "remember",
                "The kubernetes cluster is upgraded every second Monday.",
                "--scope",
                "user",
                "--type",
                "fact",
            )
        )
        await found(client, "kubernetes cluster upgraded", user["path"])
        # a memory written into this project by another engram process
        mine = await anyio.to_thread.run_sync(
            lambda: _engram(project, "remember", "Invoices are archived in the ledger bucket.")
        )
        await found(client, "invoices archived ledger bucket", mine["path"])
        # a memory file a person (or another tool) writes by hand: nobody indexed it
        hand = project / "memory" / "note" / "pager.md"
        hand.write_text(
            "---\nid: 20250101-120000-abc123\ntitle: Pager\ntype: note\n---\n"
            "The on-call pager rotates on Fridays at noon.\n",
            encoding="utf-8",
        )
        await found(client, "on-call pager rotates fridays", "memory/note/pager.md")
        # an edit by hand is seen too
        hand.write_text(
            hand.read_text(encoding="utf-8").replace("Fridays at noon", "Thursdays at nine"),
            encoding="utf-8",
        )
        await found(client, "pager rotates thursdays nine", "memory/note/pager.md")

    _serve(project, work)
    print(f"found after {', '.join(f'{w:.2f}s' for w in waits)}")


def test_the_docs_list_every_tool_and_mark_the_writing_ones() -> None:
    docs = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"
    rows = {
        line.split("|")[1].strip(" `"): line.split("|")[2].strip()
        for line in docs.read_text(encoding="utf-8").splitlines()
        if line.startswith("| `")
    }
    for name, tool in TOOLS.items():
        assert name in rows, f"docs/integrations.md has no row for the tool {name}"
        assert rows[name].startswith("yes") is not tool.read_only, name
