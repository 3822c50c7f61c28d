"""The dashboard's pages and their JSON twins over a real memory (SQLite, the local embedder),
through starlette's test client: what each shows, escaping, and that nothing can be written."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from engram.collections import CollectionDocument
from engram.dashboard.app import build_app
from engram.dashboard.data import DashboardData
from engram.memories.lifecycle.captures import CaptureLog
from engram.memory import Memory
from engram.usage import UsageLedger, ledger_path
from support import MemoryFactory, write_vault

DAY = 86_400


@pytest.fixture
def memory(open_memory: MemoryFactory, tmp_path: Path) -> Memory:
    write_vault(tmp_path, {"notes/billing.md": "# Billing\n\nThe billing service retries.\n"})
    memory = open_memory(embedder="local")
    memory.index()
    return memory


@pytest.fixture
def client(memory: Memory) -> Iterator[TestClient]:
    app = build_app(DashboardData(memory))
    with TestClient(app, base_url="http://127.0.0.1:8765") as test_client:
        yield test_client


def test_health_names_the_project_store_and_documents(client: TestClient, tmp_path: Path) -> None:
    health = client.get("/api/health").json()
    assert health["status"] == "ok" and health["store"] == "sqlite"
    assert health["project"] == str(tmp_path.resolve()) and health["documents"] == 1


def test_memories_by_type_and_scope_and_search(client: TestClient, memory: Memory) -> None:
    memory.remember("Deploys go out on Tuesdays after the change review.", type="decision")
    memory.remember("The user likes short answers.", type="preference", scope="user")
    data = client.get("/api/memories").json()
    assert data["by_type"] == {"decision": 1, "preference": 1}
    assert data["by_scope"] == {"project": 1, "user": 1}
    assert [m["type"] for m in client.get("/api/memories?scope=user").json()["memories"]] == [
        "preference"
    ]
    page = client.get("/", params={"q": "when do deploys go out"}).text
    assert "Results for" in page and "Deploys go out on Tuesdays" in page
    hits = client.get("/api/search", params={"q": "billing retries"}).json()["hits"]
    assert hits[0]["path"] == "notes/billing.md"


def test_memories_by_subject_any_case_grouped_and_linked(
    client: TestClient, memory: Memory
) -> None:
    """Issue 36, point 1: the subject in the list and on a memory's page, a ``?subject=``
    filter that matches as ``engram list --subject`` does, and a subjects view with counts
    whose links lead to the filtered list."""
    window = memory.remember("Prefers window seats on flights.", subject="Caroline")
    tea = memory.remember("Prefers green tea in the morning.", subject="CAROLINE")
    alice = memory.remember("Alice prefers aisle seats on flights.")  # subject read: alice
    memory.remember("Deploys go out on Tuesdays.", subject="Danielle Darrieux")
    data = client.get("/api/memories", params={"subject": "caroline"}).json()
    assert data["subject"] == "caroline"
    assert {m["id"] for m in data["memories"]} == {window.id, tea.id}
    assert {m["subject"] for m in data["memories"]} == {"Caroline", "CAROLINE"}
    darrieux = client.get("/api/memories", params={"subject": "DARRIEUX"}).json()["memories"]
    assert [m["subject"] for m in darrieux] == ["Danielle Darrieux"]
    assert client.get("/api/memories", params={"subject": "bob"}).json()["memories"] == []
    groups = client.get("/api/subjects").json()
    counts = {(g["key"], g["memories"]) for g in groups["subjects"]}
    assert counts == {("caroline", 2), ("alice", 1), ("danielle darrieux", 1)}
    assert groups["subjects"][0]["key"] == "caroline" and groups["without_subject"] == 0
    page = client.get("/subjects").text
    assert 'href="/?subject=Danielle+Darrieux"' in page and ">alice</a>" in page
    listing = client.get("/?subject=Caroline").text
    assert "Prefers window seats" in listing and "Prefers green tea" in listing
    assert "Alice prefers aisle" not in listing and "About <strong>Caroline</strong>" in listing
    assert 'href="/?subject=CAROLINE"' in listing  # each row's subject links to its list
    shown = client.get(f"/memory/{alice.id}").text
    assert 'about <a href="/?subject=alice">alice</a>' in shown


def test_a_memorys_page_shows_its_history(client: TestClient, memory: Memory) -> None:
    old = memory.remember("The user prefers tabs over spaces in Go code.", type="preference")
    new = memory.remember("The user prefers spaces over tabs in Go code.", type="preference")
    assert new.superseded == [old.id]
    data = client.get(f"/api/memory/{old.id}").json()
    assert [(m["id"], m["status"]) for m in data["chain"]] == [
        (old.id, "superseded"),
        (new.id, "live"),
    ]
    assert data["frontmatter"]["superseded_by"] == new.id and "tabs over spaces" in data["text"]
    assert [e["wording"] for e in data["entries"]] == [
        "The user prefers tabs over spaces in Go code.",
        "The user prefers spaces over tabs in Go code.",
    ]
    page = client.get(f"/memory/{old.id}").text
    assert "History" in page and "superseded" in page and new.id in page
    assert "Every wording" in page and "prefers spaces over tabs" in page
    assert client.get("/api/memories").json()["history"] == 1


def test_index_stats_per_source(client: TestClient, memory: Memory) -> None:
    memory.remember("Deploys go out on Tuesdays.", type="decision")
    memory.collection("docs").add([CollectionDocument(id="a", text="A collection document.")])
    data = client.get("/api/index").json()
    assert {name: s["documents"] for name, s in data["sources"].items()} == {
        "collections": 1,
        "memories": 1,
        "vault notes": 1,
    }
    assert data["chunks"] == sum(s["chunks"] for s in data["sources"].values())
    assert data["embedding_cache"]["entries"] >= 3
    assert "local" in (data["identity"] or "")
    page = client.get("/index").text
    assert "vault notes" in page and "Embedding cache:" in page


def test_usage_over_time_is_a_plot_and_errors_show_in_activity(
    client: TestClient, memory: Memory
) -> None:
    now = time.time()
    with UsageLedger(ledger_path(memory.config)) as book:
        book.record("openai", "text-embedding-3-small", 1200, cost_usd=0.0024, at=now - 2 * DAY)
        book.record("openai", "text-embedding-3-small", 300, cost_usd=0.0006, at=now - DAY)
        book.record("voyage", "voyage-3", 0, error="HTTP 429", at=now - 60)
    usage = client.get("/api/usage").json()
    assert [d["tokens"] for d in usage["days"]] == [1200, 300, 0]
    page = client.get("/usage").text
    assert page.count("<svg") == 2 and page.count("<rect") >= 4 and "1200 tokens" in page
    activity = client.get("/api/activity").json()
    assert activity["errors"] >= 1 and "no log file" in activity["not_recorded"]
    assert any(e["error"] == "HTTP 429" and "voyage" in e["what"] for e in activity["events"])
    assert "HTTP 429" in client.get("/activity").text


def test_activity_shows_what_engram_records(client: TestClient, memory: Memory) -> None:
    """Newest first: a memory written, then found by a search (the access log), a session
    captured (the capture log), and a document indexed."""
    stored = memory.remember("Deploys go out on Tuesdays after the change review.")
    memory.search("when do deploys go out")
    with CaptureLog(memory.memory_dir) as log:
        log.record("sessions/claude/abc.jsonl", 12, time.time() + 5)
    events = client.get("/api/activity").json()["events"]
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "session captured" and "12 turns" in events[0]["what"]
    assert kinds.index("memory found") < kinds.index("memory written")
    found = events[kinds.index("memory found")]
    assert stored.title in found["what"] and "found once" in found["what"]
    assert any(e["kind"] == "indexed" and "vault notes" in e["what"] for e in events)
    assert [e["at"] for e in events] == sorted((e["at"] for e in events), reverse=True)


def test_everything_shown_is_escaped(client: TestClient, memory: Memory) -> None:
    stored = memory.remember(
        "<script>alert('x')</script> <img src=x onerror=alert(1)>",
        subject="<script>alert('s')</script>",
    )
    for url in (
        "/",
        f"/memory/{stored.id}",
        "/?q=script+alert",
        "/activity",
        "/subjects",
        "/?subject=<script>alert('s')</script>",
    ):
        page = client.get(url).text
        assert "<script>alert" not in page and "<img src=x" not in page, url
        assert "&lt;script&gt;" in page, url


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
@pytest.mark.parametrize(
    "url", ["/", "/api/health", "/api/memories", "/memory/x", "/subjects", "/api/subjects"]
)
def test_nothing_can_be_written(client: TestClient, method: str, url: str) -> None:
    assert client.request(method, url).status_code == 405


def test_reading_every_page_changes_no_file(
    client: TestClient, memory: Memory, tmp_path: Path
) -> None:
    """Read-only in effect, not only in its methods: after every page and JSON twin, every
    file of the project and the user folder is byte for byte the same (memories, index, access
    and capture logs, ledger). The one exception is engram's own search: it caches the query's
    vector in the embedding cache, as ``engram search`` does (docs/dashboard.md)."""
    stored = memory.remember("Deploys go out on Tuesdays after the change review.")
    with UsageLedger(ledger_path(memory.config)) as book:
        book.record("openai", "text-embedding-3-small", 100, cost_usd=0.0002)
    client.get("/api/health")  # the first request opens what a server keeps open
    before = snapshot(tmp_path, Path(os.environ["XDG_DATA_HOME"]))
    watched = {str(tmp_path / name) for name in (".engram/index.sqlite", ".engram/usage.sqlite")}
    assert watched | {str(tmp_path / stored.path)} <= set(before)
    for url in [
        "/",
        "/?q=deploys",
        "/?subject=project",
        "/subjects",
        f"/memory/{stored.id}",
        "/index",
        "/usage",
        "/activity",
        *(f"/api/{n}" for n in ("health", "memories", "subjects", "index", "usage", "activity")),
        "/api/search?q=deploys",
        f"/api/memory/{stored.id}",
    ]:
        assert client.get(url).status_code == 200, url
    assert snapshot(tmp_path, Path(os.environ["XDG_DATA_HOME"])) == before


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file's bytes, but SQLite's shared-memory index (-shm), which readers update, and
    the embedding cache, which a search adds its query's vector to."""
    return {
        str(path): path.read_bytes()
        for root in roots
        for path in sorted(root.rglob("*"))
        if path.is_file()
        and not path.name.endswith("-shm")
        and not path.name.startswith("embeddings.sqlite")
    }


def test_an_unknown_memory_is_404_not_a_server_error(client: TestClient) -> None:
    answer = client.get("/api/memory/20990101-000000-abcdef")
    assert answer.status_code == 404 and "no memory" in answer.json()["error"]
    assert client.get("/memory/nope").status_code == 404


def test_without_the_extra_the_command_says_what_to_install(tmp_path: Path) -> None:
    """A Python where uvicorn cannot be imported (a package of that name that fails, first on
    the path) gets the install hint, not a traceback."""
    fake = tmp_path / "no-uvicorn" / "uvicorn"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'uvicorn'\", name='uvicorn')\n"
    )
    env = {**os.environ, "PYTHONPATH": str(fake.parent)}
    result = subprocess.run(
        [sys.executable, "-m", "engram", "dashboard"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 1 and "pip install -e './core[dashboard]'" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("host", ["evil.example", "evil.example:8765", "127.0.0.1.evil.example"])
def test_a_foreign_host_header_is_refused_before_any_page(client: TestClient, host: str) -> None:
    for url in ("/api/memories", "/api/search?q=billing", "/", "/api/health"):
        answer = client.get(url, headers={"Host": host})
        assert answer.status_code == 400 and "billing" not in answer.text.lower()


@pytest.mark.parametrize("host", ["127.0.0.1:8765", "localhost:8765", "[::1]:8765", "LOCALHOST"])
def test_loopback_names_are_served(client: TestClient, host: str) -> None:
    assert client.get("/api/memories", headers={"Host": host}).status_code == 200
