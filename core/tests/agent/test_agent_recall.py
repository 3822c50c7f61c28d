"""Recall: the most relevant memories, deduplicated, each with its source path, and never over
the token budget (counted with the real tokenizer), whatever the memories and the budget.
(Recall over the SQLite store and through the CLI: tests/agent/test_agent_recall_persistent.py.)"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engram.memories.recall import HEADER, RecallItem, build_block, deduplicate
from engram.text.tokens import default_tokenizer
from support import MemoryFactory

TOKENS = default_tokenizer()
WORDS = ["postgres", "kafka", "deploy", "rollback", "coupon", "grafana", "tuesday", "ledger"]

texts = st.text(
    alphabet=st.characters(codec="utf-8", categories=("L", "M", "N", "P", "S", "Z", "Cc")),
    min_size=0,
    max_size=600,
)
items = st.builds(
    RecallItem,
    path=st.from_regex(r"[a-z]{1,12}/[a-z0-9-]{1,20}\.md", fullmatch=True),
    start_line=st.integers(1, 500),
    end_line=st.integers(1, 500),
    text=st.one_of(texts, st.lists(st.sampled_from(WORDS), max_size=400).map(" ".join)),
)


@settings(max_examples=100, deadline=None)
@given(candidates=st.lists(items, max_size=25), budget=st.integers(0, 3000))
def test_block_never_exceeds_the_budget(candidates: list[RecallItem], budget: int) -> None:
    text, chosen = build_block(candidates, budget, TOKENS)
    assert TOKENS.count(text) <= budget
    assert (text == "") == (chosen == [])
    for item in chosen:
        assert item.location() in text


def test_tiny_budgets_give_an_empty_block_not_an_overflow() -> None:
    item = RecallItem(path="memory/a.md", start_line=1, end_line=3, text="postgres " * 50)
    for budget in range(TOKENS.count(HEADER) + 8):
        text, chosen = build_block([item], budget, TOKENS)
        assert text == "" and chosen == []


def test_long_memories_are_shortened_to_fit() -> None:
    item = RecallItem(path="memory/a.md", start_line=1, end_line=9, text="kafka lag " * 400)
    text, chosen = build_block([item], 120, TOKENS)
    assert chosen and chosen[0].truncated and text.endswith("…")
    assert 100 <= TOKENS.count(text) <= 120


def test_duplicates_and_near_duplicates_are_dropped() -> None:
    base = "the ledger service uses postgres with serializable transactions and nightly backups"
    candidates = [
        RecallItem(path="a.md", id="c1", start_line=1, end_line=2, text=base),
        RecallItem(path="b.md", id="c1", text="same chunk id, other text"),
        RecallItem(path="c.md", text=base.upper()),
        RecallItem(path="d.md", text=base + " again"),
        RecallItem(path="a.md", start_line=1, end_line=2, text="the same place again"),
        RecallItem(path="a.md", start_line=5, end_line=6, text="another place, same file"),
        RecallItem(path="e.md", text="kafka consumers lag when max.poll.records is too high"),
    ]
    assert [c.path for c in deduplicate(candidates)] == ["a.md", "a.md", "e.md"]


def test_recall_returns_relevant_memories_with_their_paths(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    kept = memory.remember("The ledger runs on PostgreSQL 16 with logical replication.")
    memory.remember("The ledger runs on PostgreSQL 16 with logical replication.", title="copy")
    memory.remember("Grafana dashboards live in the observability repo.")
    result = memory.recall("ledger postgresql replication", budget=2000)
    assert result.items and result.items[0].path in (kept.path, "memory/note/copy.md")
    replication = [i for i in result.items if "logical replication" in i.text]
    assert len(replication) == 1, "the same memory appeared twice"
    assert f"[1] {result.items[0].path}:" in result.text
    assert result.tokens <= 2000


def test_recall_without_a_query_gives_the_newest_memories(open_memory: MemoryFactory) -> None:
    memory = open_memory()
    memory.remember("first: use ruff for linting")
    memory.remember("second: pin mcp below 3")
    result = memory.recall(None, budget=500)
    assert [i.text for i in result.items] == [
        "second: pin mcp below 3",
        "first: use ruff for linting",
    ]
