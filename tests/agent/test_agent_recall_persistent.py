"""Recall over a persistent store: never over the budget on the real SQLite store, whatever the
memories, and the ``engram recall`` command, which opens the store anew after ``engram remember``.
(Recall on core's own parts: core/tests/agent/test_agent_recall.py.)"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engram.cli import main
from engram.config import load_config
from engram.memory import Memory
from engram.text.tokens import default_tokenizer

TOKENS = default_tokenizer()
WORDS = ["postgres", "kafka", "deploy", "rollback", "coupon", "grafana", "tuesday", "ledger"]


@settings(
    max_examples=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    memories=st.lists(
        st.lists(st.sampled_from(WORDS), min_size=1, max_size=120).map(" ".join),
        min_size=1,
        max_size=8,
    ),
    budget=st.integers(0, 400),
    query=st.sampled_from(WORDS),
)
def test_recall_over_a_real_store_stays_within_budget(
    monkeypatch: pytest.MonkeyPatch, memories: list[str], budget: int, query: str
) -> None:
    monkeypatch.setenv("ENGRAM_LOAD_PLUGINS", "engram-sqlite")  # only the store this test needs
    with tempfile.TemporaryDirectory() as folder:
        config = load_config(
            {"store": {"backend": "sqlite"}, "embedder": {"provider": "hash"}},
            start=Path(folder),
        )
        with Memory.open(config) as memory:
            for text in memories:
                memory.remember(text)
            result = memory.recall(query, budget=budget)
            assert result.tokens == TOKENS.count(result.text) <= budget
            for item in result.items:
                assert item.path.startswith("memory/note/") and item.path in result.text


def test_recall_command_prints_the_block(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "engram.toml").write_text('[embedder]\nprovider = "hash"\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["remember", "Releases are cut from the main branch every Thursday."]) == 0
    assert main(["recall", "--query", "releases thursday", "--budget", "300"]) == 0
    out, err = capsys.readouterr()
    assert "memory/note/releases-are-cut-from-the-main-branch-every-thursday.md" in out
    assert "/300 tokens" in err
