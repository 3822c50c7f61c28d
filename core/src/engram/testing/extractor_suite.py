"""``ExtractorSuite``: what every Extractor must do. Provide an ``extractor`` fixture; override
``conversation`` if your extractor needs particular messages to find something.

Switches (class attributes) instead of overridden tests:

- ``checks_contradictions`` / ``condenses``: whether the extractor implements the optional
  ``ChecksContradictions`` / ``Condenses`` protocols (the suite then tests them; when False it
  checks they are really absent, so core does not call a half-made method);
- ``min_recall``: the recall the extractor promises on ``engram.testing.conversations.LABELLED``
  (None: it makes no promise, e.g. a model behind a scripted fake server).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

import pytest

from engram.models import ExtractedMemory, KnownMemory, Message
from engram.protocols import ChecksContradictions, Condenses, Extractor, ReportsFailures
from engram.testing.conversations import measure_recall
from engram.testing.integrity import SuiteIntegrity

README = """# Billing service

The billing service issues invoices and charges cards for the shop. It is a FastAPI app
backed by PostgreSQL 15, deployed on Kubernetes.

## Development

Run the tests with `pytest -q`.
"""
PYPROJECT = """[project]
name = "billing"
requires-python = ">=3.11"
dependencies = ["fastapi>=0.110", "sqlalchemy>=2", "psycopg>=3"]
"""


class ExtractorSuite(SuiteIntegrity):
    """Conformance tests for an Extractor."""

    _conformance_suite = True
    checks_contradictions: ClassVar[bool] = True
    condenses: ClassVar[bool] = True
    min_recall: ClassVar[float | None] = None

    @pytest.fixture
    def extractor(self) -> Extractor | Iterator[Extractor]:
        raise pytest.UsageError(
            "ExtractorSuite needs an `extractor` fixture; define it in your subclass"
        )

    @pytest.fixture
    def conversation(self) -> list[Message]:
        return [
            Message(role="user", content="I prefer tabs over spaces in Go code."),
            Message(
                role="assistant", content="Noted. We decided to use PostgreSQL 15 for billing."
            ),
            Message(
                role="user", content="The deploy failed with OOMKilled; raising the limit fixed it."
            ),
            Message(
                role="assistant", content="Good. Run the tests with `pytest -q` before you push."
            ),
        ]

    @pytest.fixture
    def project_files(self) -> list[Message]:
        """Project files as ``init`` mode gets them: one user message per file."""
        return [
            Message(role="user", content=f"# File: README.md\n\n{README}"),
            Message(role="user", content=f"# File: pyproject.toml\n\n{PYPROJECT}"),
        ]

    # -- extract ---------------------------------------------------------------------------------

    def test_finds_typed_memories_in_a_conversation(
        self, extractor: Extractor, conversation: list[Message]
    ) -> None:
        """A conversation with a preference and a decision yields typed memories.
        Failure: the extractor returns dicts or untyped strings instead of ExtractedMemory."""
        found = extractor.extract(conversation)
        assert found and all(isinstance(m, ExtractedMemory) for m in found)
        assert all(m.content.strip() for m in found)

    def test_empty_conversation_yields_nothing(self, extractor: Extractor) -> None:
        """No messages, no memories, no error."""
        assert extractor.extract([]) == []

    @pytest.mark.parametrize("mode", ["normal", "summary", "init"])
    def test_every_mode_is_accepted(
        self, extractor: Extractor, conversation: list[Message], mode: str
    ) -> None:
        """The three modes are part of the protocol. Failure: a mode raises instead of returning."""
        assert isinstance(extractor.extract(conversation, mode=mode), list)  # type: ignore[arg-type]

    def test_summary_mode_gives_exactly_one_session_summary(
        self, extractor: Extractor, conversation: list[Message]
    ) -> None:
        """``summary`` mode sums a session up in one ``session-summary`` memory.
        Failure: it returned several facts (that is ``normal`` mode) or another type."""
        found = extractor.extract(conversation, mode="summary")
        assert [m.type for m in found] == ["session-summary"]
        assert found[0].content.strip()

    def test_init_mode_finds_a_project_brief(
        self, extractor: Extractor, project_files: list[Message]
    ) -> None:
        """``init`` mode reads project files and always describes the project in a
        ``project-brief``. Failure: init mode treats files like chat, or finds no brief."""
        found = extractor.extract(project_files, mode="init")
        briefs = [m for m in found if m.type == "project-brief"]
        assert briefs and any("billing" in m.content.casefold() for m in briefs)

    def test_unicode_and_long_messages_do_not_fail(self, extractor: Extractor) -> None:
        """Real transcripts hold emoji, CJK and pasted logs. Failure: encoding or length error."""
        messages = [Message(role="user", content="我喜欢 🦙 " + "log line\n" * 5000)]
        assert isinstance(extractor.extract(messages), list)

    def test_a_successful_call_reports_no_failure(
        self, extractor: Extractor, conversation: list[Message]
    ) -> None:
        """An extractor that reports failures (``ReportsFailures``) clears ``last_error`` after
        a call that worked. Failure: a stale error would show as a warning on every capture."""
        extractor.extract(conversation)
        if isinstance(extractor, ReportsFailures):
            assert extractor.last_error is None

    def test_recall_on_the_labelled_conversations(self, extractor: Extractor) -> None:
        """What the extractor finds in ``engram.testing.conversations.LABELLED``, against the
        recall it promises (``min_recall``). Failure: a pattern or prompt stopped finding a kind
        of memory; the message lists what was missed."""
        report = measure_recall(extractor)
        assert report.total > 0
        if self.min_recall is not None:
            assert report.recall >= self.min_recall, (
                f"recall {report.recall:.2f} < {self.min_recall}: missed {report.missed}"
            )

    # -- contradictions --------------------------------------------------------------------------

    def test_a_changed_preference_contradicts_the_old_one(self, extractor: Extractor) -> None:
        """The user preferred tabs, now prefers spaces: the old memory is stale, the unrelated
        one is not. Failure: the check misses a plain reversal, or flags unrelated memories."""
        assert isinstance(extractor, ChecksContradictions) == self.checks_contradictions
        if not isinstance(extractor, ChecksContradictions):
            return
        new = ExtractedMemory(type="preference", content="The user prefers spaces over tabs.")
        candidates = [
            KnownMemory(id="old-tabs", type="preference", content="The user prefers tabs."),
            KnownMemory(id="db", type="decision", content="Billing uses PostgreSQL 15."),
        ]
        assert extractor.find_contradictions(new, candidates) == ["old-tabs"]

    def test_unrelated_memories_are_never_stale(self, extractor: Extractor) -> None:
        """A memory about something else supersedes nothing; ids outside the candidates are
        never returned. Failure: the check is too eager (it would hide true memories)."""
        if not isinstance(extractor, ChecksContradictions):
            return
        new = ExtractedMemory(type="decision", content="We deploy on Fridays only after review.")
        candidates = [
            KnownMemory(id="a", type="preference", content="The user prefers tabs."),
            KnownMemory(id="b", type="error-solution", content="OOMKilled: raise the limit."),
        ]
        assert extractor.find_contradictions(new, candidates) == []
        assert extractor.find_contradictions(new, []) == []

    # -- condensing ------------------------------------------------------------------------------

    def test_condense_gives_a_learned_pattern_or_nothing(self, extractor: Extractor) -> None:
        """Old session summaries become one ``learned-pattern`` (or None: archive them).
        Failure: condense returns another type, or raises on ordinary summaries."""
        assert isinstance(extractor, Condenses) == self.condenses
        if not isinstance(extractor, Condenses):
            return
        summaries = [
            KnownMemory(
                id=f"s{i}",
                type="session-summary",
                content=f"Session {i}: fixed flaky tests by pinning the random seed in conftest.",
            )
            for i in range(4)
        ]
        learned = extractor.condense(summaries)
        assert learned is None or (
            learned.type == "learned-pattern" and learned.content.strip() != ""
        )
        assert extractor.condense([]) is None
