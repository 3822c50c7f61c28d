"""``ExtractorSuite``: what every Extractor must do. Provide an ``extractor`` fixture and, if
your extractor needs a particular conversation to find something, ``conversation``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from engram.models import ExtractedMemory, Message
from engram.protocols import Extractor
from engram.testing.integrity import SuiteIntegrity


class ExtractorSuite(SuiteIntegrity):
    """Conformance tests for an Extractor."""

    _conformance_suite = True

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
        ]

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

    def test_unicode_and_long_messages_do_not_fail(self, extractor: Extractor) -> None:
        """Real transcripts hold emoji, CJK and pasted logs. Failure: encoding or length error."""
        messages = [Message(role="user", content="我喜欢 🦙 " + "log line\n" * 5000)]
        assert isinstance(extractor.extract(messages), list)
