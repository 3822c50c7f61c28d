"""``LLMExtractor``: extraction, contradiction checks and condensing by a chat model, with the
providers tried in order until one answers.

Nothing raises into the caller: when every provider fails, the call logs a warning, sets
``last_error`` (one line naming each provider's failure) and returns what "nothing found"
means for it (``[]``, ``[]``, ``None``). Answers are validated with pydantic; a memory of an
unknown type is dropped, not the whole answer. The conversation is windowed and stripped of
``<private>`` spans (``engram.prepare_messages``) before any prompt is built, whoever calls.
"""

from __future__ import annotations

import logging
import random as _random
import time
from collections.abc import Callable, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from engram import (
    EXTRACTED_TYPES,
    RELATIONS,
    EngramError,
    ExtractedMemory,
    ExtractionMode,
    JudgeCandidate,
    KnownMemory,
    LifecycleConfig,
    Message,
    UsageLedger,
    Verdict,
    judge,
    prepare_messages,
)
from engram_llm import prompts
from engram_llm.options import LLMOptions
from engram_llm.providers import make_provider

log = logging.getLogger(__name__)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: str
    content: str = Field(min_length=1)
    title: str | None = None
    tags: list[Any] = Field(default_factory=list)  # a stray non-string tag is dropped alone
    importance: float = Field(default=1.0, ge=0, le=10)


class LLMExtractor:
    """The ``llm`` extractor; see the module docstring."""

    name = "llm"

    def __init__(
        self,
        options: LLMOptions | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
    ) -> None:
        self.options = options if options is not None else LLMOptions()
        self.ledger = UsageLedger(self.options.ledger_path) if self.options.record_usage else None
        self.providers = [
            make_provider(p, self.options, ledger=self.ledger, sleep=sleep, random=random)
            for p in self.options.providers
        ]
        self.last_error: str | None = None

    # -- the three tasks -----------------------------------------------------------------------
    def extract(
        self, messages: Sequence[Message], mode: ExtractionMode = "normal"
    ) -> list[ExtractedMemory]:
        shown = prepare_messages(messages, mode)
        if not shown:
            self.last_error = None
            return []
        data = self._ask(*prompts.extraction(mode, shown), operation="extract")
        if data is None:
            return []
        items = data.get("memories") if isinstance(data, dict) else data
        found = _memories(items if isinstance(items, list) else [])
        if mode == "summary":
            first = found[0] if found else None
            if first is None:
                return []
            return [first.model_copy(update={"type": "session-summary"})]
        return found

    def find_contradictions(
        self, new: ExtractedMemory, candidates: Sequence[KnownMemory]
    ) -> list[str]:
        if not candidates:
            self.last_error = None
            return []
        data = self._ask(*prompts.contradiction(new, candidates), operation="contradict")
        stale = data.get("stale") if isinstance(data, dict) else None
        named = {str(i) for i in stale} if isinstance(stale, list) else set()
        return [c.id for c in candidates if c.id in named]

    def judge_memories(
        self, new: ExtractedMemory, candidates: Sequence[JudgeCandidate], rules: LifecycleConfig
    ) -> list[Verdict]:
        """The model's relation for each candidate (``engram.memories.judge.verdicts``); a candidate
        it leaves out or names a relation for that does not exist gets the offline judge's verdict.
        Raises when every provider failed, so core falls back to the offline judge with a
        warning."""
        if not candidates:
            self.last_error = None
            return []
        data = self._ask(*prompts.judgment(new, candidates), operation="judge")
        if data is None:
            raise EngramError(self.last_error or "the model gave no verdicts")
        items = data.get("verdicts") if isinstance(data, dict) else None
        said: dict[str, Verdict] = {}
        for item in items if isinstance(items, list) else []:
            if not isinstance(item, dict):
                continue
            relation = item.get("relation")
            if relation in RELATIONS:
                reason = str(item.get("reason") or "the model's judgment")
                said[str(item.get("id"))] = Verdict(relation, f"llm: {reason}")
        return [
            said.get(c.memory.id) or judge(new, c.memory, c.distance, rules) for c in candidates
        ]

    def condense(self, summaries: Sequence[KnownMemory]) -> ExtractedMemory | None:
        if not summaries:
            self.last_error = None
            return None
        data = self._ask(*prompts.condensation(summaries), operation="condense")
        learned = data.get("learned_pattern") if isinstance(data, dict) else None
        if not isinstance(learned, dict):
            return None
        found = _memories([{**learned, "type": "learned-pattern"}])
        return found[0] if found else None

    # -- providers -----------------------------------------------------------------------------
    def _ask(self, system: str, user: str, *, operation: str) -> Any:
        """The first provider's answer that arrives, or None (with ``last_error``) when all
        fail."""
        failures = []
        for provider in self.providers:
            try:
                answer = provider.ask(system, user, operation)
            except EngramError as exc:
                failures.append(f"{provider.label}: {exc}")
                log.warning(
                    "llm extractor: provider %s failed (%s): %s", provider.label, operation, exc
                )
                continue
            except Exception as exc:  # a bug in an SDK or a server: never into the agent
                failures.append(f"{provider.label}: unexpected {type(exc).__name__}")
                log.info(
                    "llm extractor: provider %s failed unexpectedly: %s",
                    provider.label,
                    type(exc).__name__,
                )
                continue
            self.last_error = None
            return answer
        self.last_error = f"every provider failed to {operation}: " + "; ".join(failures)
        log.warning("llm extractor: %s", self.last_error)
        return None

    def close(self) -> None:
        for provider in self.providers:
            provider.close()
        if self.ledger is not None:
            self.ledger.close()


def _memories(items: list[Any]) -> list[ExtractedMemory]:
    """Valid memories of known types; anything else in the answer is dropped."""
    out = []
    for item in items:
        try:
            answer = _Answer.model_validate(item)
        except ValidationError:
            continue
        if answer.type not in EXTRACTED_TYPES:
            continue
        out.append(
            ExtractedMemory.model_validate(
                {
                    "type": answer.type,
                    "content": answer.content.strip(),
                    "title": (answer.title or "").strip() or None,
                    "tags": [t for t in answer.tags if isinstance(t, str) and t.strip()][:10],
                    "importance": answer.importance,
                }
            )
        )
    return out
