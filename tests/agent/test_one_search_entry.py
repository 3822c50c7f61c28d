"""Issue #37 point 2: one search entry. The same query through ``engram search``, the
``memory_search`` tool, ``Memory.search``, the dashboard API, the LangChain retriever and the
LlamaIndex retriever returns the same ids in the same order, typed questions ("what are my
preferences") included; recall's block keeps the entry's order (real CLI, SQLite, the hash
embedder)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from starlette.testclient import TestClient

from engram.config import load_config
from engram.dashboard.app import build_app
from engram.dashboard.data import DashboardData
from engram.memory import Memory
from engram.models import MemoryType
from engram.tools.toolbox import Toolbox
from engram_langchain import EngramMemoryRetriever as LangChainRetriever
from engram_llamaindex import EngramMemoryRetriever as LlamaIndexRetriever
from support import cli_json, write_vault

K = 5
MEMORIES: list[tuple[str, MemoryType]] = [
    ("The user prefers tabs over spaces in Python code.", "preference"),
    ("The user likes short commit messages in the imperative.", "preference"),
    ("The user wants answers in British English.", "preference"),
    ("We decided to deploy on Tuesdays after the change review.", "decision"),
    ("We chose PostgreSQL over MySQL for the billing service.", "decision"),
    ("ImportError for yaml: the fix was to install pyyaml.", "error-solution"),
    ("The API listens on port 8080 behind nginx.", "project-config"),
    ("Billing retries failed invoices three times before paging.", "fact"),
]
QUESTIONS = [
    "what are my preferences",
    "what did we decide",
    "list all my error solutions",
    "show all config",
    "billing retries",
    "deploy on tuesdays",
]
Face = Callable[[str], list[str]]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Memory]:
    root = tmp_path / "project"
    (root / "notes").mkdir(parents=True)
    (root / "engram.toml").write_text(
        '[store]\nbackend = "sqlite"\n[embedder]\nprovider = "hash"\n', encoding="utf-8"
    )
    write_vault(
        root / "notes",
        {
            "billing.md": "# Billing\n\nThe billing service retries invoices nightly.\n",
            "deploys.md": "# Deploys\n\nDeploys go out from the main branch.\n",
            "style.md": "# Style\n\nPrefer small modules with docstrings.\n",
        },
    )
    monkeypatch.chdir(root)
    memory = Memory.open(load_config(start=root))
    try:
        memory.index()
        for text, kind in MEMORIES:
            memory.remember(text, type=kind)
        yield memory
    finally:
        memory.close()


@pytest.fixture
def faces(project: Memory, capsys: pytest.CaptureFixture[str]) -> Iterator[dict[str, Face]]:
    toolbox = Toolbox(project, fresh=False)
    langchain = LangChainRetriever(memory=project, k=K)
    llamaindex = LlamaIndexRetriever(project, k=K)
    with TestClient(build_app(DashboardData(project)), base_url="http://127.0.0.1:8765") as web:

        def cli(query: str) -> list[str]:
            return [h["id"] for h in cli_json(capsys, "search", query, "-n", str(K))["hits"]]

        def tool(query: str) -> list[str]:
            out = toolbox.call("memory_search", {"query": query, "limit": K})
            assert out.ok and out.data is not None, out.text
            return [h["id"] for h in out.data["results"]]

        def dashboard(query: str) -> list[str]:
            answer = web.get("/api/search", params={"q": query, "limit": str(K)})
            assert answer.status_code == 200
            return [h["id"] for h in answer.json()["hits"]]

        yield {
            "engram search": cli,
            "memory_search": tool,
            "Memory.search": lambda q: [h.chunk.id for h in project.search(q, limit=K).hits],
            "dashboard": dashboard,
            "LangChain": lambda q: [str(d.id) for d in langchain.invoke(q)],
            "LlamaIndex": lambda q: [n.node.node_id for n in llamaindex.retrieve(q)],
        }


def test_every_face_answers_a_question_with_the_same_ids_in_the_same_order(
    project: Memory, faces: dict[str, Face]
) -> None:
    for question in QUESTIONS:
        answers = {name: face(question) for name, face in faces.items()}
        expected = answers["Memory.search"]
        assert expected, f"no hits for {question!r}"
        assert answers == dict.fromkeys(faces, expected), question


def test_a_typed_question_puts_that_types_memories_first_in_every_face(
    project: Memory, faces: dict[str, Face]
) -> None:
    preferences = {
        c.id
        for batch in project.store.iter_chunks()
        for c in batch
        if c.metadata.get("type") == "preference"
    }
    assert len(preferences) == 3
    for name, face in faces.items():
        assert set(face("what are my preferences")[:3]) == preferences, name


def test_recall_keeps_the_entrys_order(project: Memory) -> None:
    for question in QUESTIONS:
        wide = project.config.recall.candidates
        ranked = [h.chunk.id for h in project.search(question, limit=wide, count_access=False).hits]
        block = [i.id for i in project.recall(question).items if i.id is not None]
        assert block, question
        assert block == [i for i in ranked if i in block], question
        assert set(block) <= set(ranked), question


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    words=st.lists(
        st.sampled_from(
            ["my", "preferences", "decisions", "config", "billing", "deploy", "notes", "the"]
        ),
        min_size=1,
        max_size=4,
    )
)
def test_any_query_gets_one_answer_from_the_library_faces(
    project: Memory, words: list[str]
) -> None:
    query = " ".join(words)
    expected = [h.chunk.id for h in project.search(query, limit=K).hits]
    chain = [str(d.id) for d in LangChainRetriever(memory=project, k=K).invoke(query)]
    nodes = [n.node.node_id for n in LlamaIndexRetriever(project, k=K).retrieve(query)]
    assert chain == expected and nodes == expected
