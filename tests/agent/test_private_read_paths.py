"""A ``<private>`` span a person typed by hand into a memory file (its title, tags, source, body,
a revision's wording and title) never comes out of any read path: ``engram list`` (text and
JSON), ``history``, ``export``, ``recall``, ``search``, ``get``; the dashboard's memory list,
activity and memory pages and their JSON twins; and every MCP tool, through the SDK's client.
``memory_restore`` of a private revision brings back its words without the span."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
import yaml
from mcp import Client
from starlette.testclient import TestClient

from engram.dashboard.app import build_app
from engram.dashboard.data import DashboardData
from engram.mcp import build_server
from engram.memory import Memory
from engram.tools.toolbox import TOOLS, Toolbox
from support import MemoryFactory, cli

SECRETS = [f"SECRET{n}XQ" for n in range(1, 9)]


def _hand_edit(path: Path) -> None:
    """Plant a secret in each field a person may type one into, in odd spellings of the tag."""
    text = path.read_text(encoding="utf-8")
    _, head, _body = text.split("---\n", 2)
    meta: dict[str, Any] = yaml.safe_load(head)
    meta["title"] = f"Deploy <private>{SECRETS[0]}</private> window"
    meta["tags"] = ["ops", f"<private>{SECRETS[1]}</private>"]
    meta["source"] = f"me < PRIVATE >{SECRETS[2]}</private >"
    meta["project"] = f"<private>{SECRETS[7]}"  # unclosed: hides the rest of the value
    meta["revisions"] = [
        {
            "wording": f"Deploys wait for review. <private>{SECRETS[3]}</private> Tuesdays.",
            "title": f"Old <Private>{SECRETS[4]}</Private> title",
            "when": "2025-01-01T00:00:00+00:00",
            "why": f"merged <private>{SECRETS[5]}</private>",
        }
    ]
    body = f"The deploy window is Tuesday.\n\n<private>the pager PIN is {SECRETS[6]}</private>\n"
    dumped = yaml.safe_dump(meta, sort_keys=False, allow_unicode=True)
    path.write_text(f"---\n{dumped}---\n{body}", encoding="utf-8")


def _clean(where: str, text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, f"{where} shows {secret}: {text[:2000]}"


@pytest.fixture
def planted(
    open_memory: MemoryFactory, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[Memory, str, str]:
    (tmp_path / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    memory = open_memory()
    stored = memory.remember("The deploy window is Tuesday.", type="decision", tags=["ops"])
    _hand_edit(tmp_path / stored.path)
    memory.index()
    return memory, stored.id, stored.path


def test_the_cli_read_paths_never_show_a_hand_typed_span(
    planted: tuple[Memory, str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    _, memory_id, path = planted
    for args in (
        ["list"],
        ["list", "--json"],
        ["list", "--include-superseded", "--json"],
        ["list", "--tag", "ops"],
        ["history", memory_id],
        ["history", memory_id, "--json"],
        ["export"],
        ["recall"],
        ["recall", "--json"],
        ["search", "deploy window"],
        ["search", "deploy window", "--json"],
        ["get", path],
    ):
        code, out, err = cli(capsys, *args)
        assert code == 0, (args, err)
        _clean(" ".join(args), out + err)
    code, out, _ = cli(capsys, "list", "--json")
    shown = json.loads(out)[0]
    assert shown["title"] == "Deploy  window" and shown["tags"] == ["ops"]
    code, out, _ = cli(capsys, "history", memory_id, "--json")
    wordings = [e["wording"] for e in json.loads(out)["entries"]]
    assert wordings[0] == "Deploys wait for review.  Tuesdays."
    assert wordings[1].startswith("The deploy window is Tuesday.")
    records = [json.loads(line) for line in cli(capsys, "export")[1].splitlines()]
    assert len(records) == 1 and "The deploy window is Tuesday." in records[0]["markdown"]


def test_the_dashboard_never_shows_a_hand_typed_span(planted: tuple[Memory, str, str]) -> None:
    memory, memory_id, _ = planted
    app = build_app(DashboardData(memory))
    with TestClient(app, base_url="http://127.0.0.1:8765") as client:
        for url in (
            "/",
            "/api/memories",
            "/activity",
            "/api/activity",
            f"/memory/{memory_id}",
            f"/api/memory/{memory_id}",
            "/api/search?q=deploy+window",
            "/?q=deploy+window",
            "/index",
        ):
            response = client.get(url)
            assert response.status_code == 200, url
            _clean(url, response.text)
        page = client.get(f"/api/memory/{memory_id}").json()
        assert page["frontmatter"]["tags"] == ["ops", ""]
        assert page["text"].startswith("The deploy window is Tuesday.")


def test_every_mcp_tool_never_shows_a_hand_typed_span(planted: tuple[Memory, str, str]) -> None:
    memory, memory_id, path = planted
    server = build_server(Toolbox(memory))
    calls: list[tuple[str, dict[str, Any]]] = [
        ("memory_list", {}),
        ("memory_list", {"include_superseded": True, "tag": "ops"}),
        ("memory_search", {"query": "deploy window"}),
        ("memory_get", {"path": path}),
        ("memory_stats", {}),
        ("memory_history", {"id": memory_id}),
        ("memory_recall", {"task": "deploy window"}),
        ("memory_tags", {"include_superseded": True}),
        ("memory_recent", {}),
        ("memory_usage", {}),
        ("search", {"query": "deploy window"}),
        ("fetch", {"id": memory_id}),
        ("memory_edit", {"id": memory_id, "importance": 2}),
        ("memory_restore", {"id": memory_id, "revision": 1}),
        ("memory_list", {}),
        ("memory_store", {"content": "The deploy window is Tuesday.", "type": "decision"}),
        ("memory_move", {"id": memory_id, "to": "decision/window.md"}),
        ("memory_forget", {"id": memory_id}),
    ]
    assert {name for name, _ in calls} == set(TOOLS)

    async def main() -> None:
        async with Client(server) as client:
            read = await client.read_resource(f"engram://memory/{memory_id}")
            _clean("resources/read", json.dumps(read.model_dump(mode="json")))
            listed = await client.list_resources()
            _clean("resources/list", json.dumps(listed.model_dump(mode="json")))
            asked = await client.get_prompt("recall", {"task": "deploy window"})
            _clean("prompts/get", json.dumps(asked.model_dump(mode="json")))
            for name, arguments in calls:
                result = await client.call_tool(name, arguments)
                assert not result.is_error, (name, result.content)
                text = "\n".join(getattr(b, "text", "") for b in result.content)
                _clean(name, text + json.dumps(result.structured_content))
                if name == "memory_edit":  # a span typed by hand stays in the file as it was
                    kept = (memory.config.root / path).read_text(encoding="utf-8")
                    assert SECRETS[6] in kept.split("---\n", 2)[2]
                if name == "memory_restore":
                    # The revision's words are live again, its private span is not.
                    live = (memory.config.root / path).read_text(encoding="utf-8")
                    body = live.split("---\n", 2)[2]
                    assert "Deploys wait for review." in body and SECRETS[3] not in body

    anyio.run(main)
