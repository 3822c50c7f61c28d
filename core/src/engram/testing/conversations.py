"""Labelled conversations: what an extractor should find in each, to measure its recall.

Each ``Expected`` names a memory type and a ``needle``: a word or phrase (case-insensitive) that
the content or title of a memory of that type must contain. Recall is the share of expectations
some extracted memory meets. The set is small and written by hand to cover the four things the
offline ``rules`` extractor looks for (preferences, decisions, error → solution pairs,
configuration facts) and some it should leave alone (chatter, questions).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from engram.models import ExtractedMemory, MemoryType, Message
from engram.protocols import Extractor


@dataclass(frozen=True)
class Expected:
    type: MemoryType
    needle: str

    def met_by(self, memories: Sequence[ExtractedMemory]) -> bool:
        needle = self.needle.casefold()
        return any(
            m.type == self.type and needle in f"{m.title or ''} {m.content}".casefold()
            for m in memories
        )


@dataclass(frozen=True)
class Labelled:
    name: str
    messages: list[Message]
    expected: list[Expected] = field(default_factory=list)


def _chat(*turns: str) -> list[Message]:
    """Alternating user / assistant messages, starting with the user."""
    roles = ("user", "assistant")
    return [Message(role=roles[i % 2], content=text) for i, text in enumerate(turns)]


LABELLED: list[Labelled] = [
    Labelled(
        "indentation preference",
        _chat(
            "I prefer tabs over spaces in Go code.",
            "Noted, I'll use tabs for Go files.",
        ),
        [Expected("preference", "tabs")],
    ),
    Labelled(
        "database decision",
        _chat(
            "Which database should billing use?",
            "We decided to use PostgreSQL 15 for billing because we need serializable "
            "transactions.",
        ),
        [Expected("decision", "PostgreSQL")],
    ),
    Labelled(
        "deploy failure fixed",
        _chat(
            "The deploy failed with OOMKilled on the worker pods.",
            "Raising the memory limit to 2Gi fixed it.",
        ),
        [Expected("error-solution", "OOMKilled")],
    ),
    Labelled(
        "test command",
        _chat(
            "How do I run the tests here?",
            "Run the tests with `pytest -q`; the config lives in pyproject.toml.",
        ),
        [Expected("project-config", "pytest -q")],
    ),
    Labelled(
        "small talk",
        _chat("Thanks, that's all for today!", "You're welcome, see you tomorrow."),
        [],
    ),
]


@dataclass(frozen=True)
class RecallReport:
    """How many expectations an extractor met, and which it missed (by conversation)."""

    met: int
    total: int
    missed: list[str]
    spurious: list[str]

    @property
    def recall(self) -> float:
        return self.met / self.total if self.total else 1.0


def measure_recall(
    extractor: Extractor, conversations: Sequence[Labelled] = tuple(LABELLED)
) -> RecallReport:
    """Run ``extractor`` (normal mode) over every labelled conversation and count what it met.
    ``spurious`` lists conversations labelled with nothing in which it still found something."""
    met, total = 0, 0
    missed: list[str] = []
    spurious: list[str] = []
    for case in conversations:
        found = extractor.extract(case.messages)
        if not case.expected and found:
            spurious.append(f"{case.name}: {[m.content for m in found]}")
        for want in case.expected:
            total += 1
            if want.met_by(found):
                met += 1
            else:
                missed.append(f"{case.name}: no {want.type} with {want.needle!r}")
    return RecallReport(met=met, total=total, missed=missed, spurious=spurious)
