"""The model behind the llm extractor's fake chat server (``fake_apis.ChatCompletions``, served
by the ``fake_api`` fixture): small and deterministic, it reads the task from the system prompt
and answers with what engram's offline ``rules`` extractor makes of the same input, so the
answers are meaningful and repeatable."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from engram import (
    ExtractedMemory,
    ExtractionMode,
    KnownMemory,
    LifecycleConfig,
    Message,
    RulesExtractor,
    judge,
)
from engram_llm.extractor import LLMExtractor

KEY = "sk-fake-chat-key-0000"
Build = Callable[..., LLMExtractor]  # the `build` fixture: providers (servers or dicts) → extractor


def answer(body: dict[str, Any]) -> dict[str, Any]:
    """What the fake model answers: the task is read from the system prompt, the data from
    the JSON in the user prompt."""
    messages = body.get("messages", [])
    system = str(messages[0]["content"]) if messages else ""
    user = str(messages[-1]["content"]) if messages else ""
    rules = RulesExtractor()
    if system.startswith("You judge how"):
        new_part, stored_part = user.split("\nStored memories:\n", 1)
        new = json.loads(new_part.removeprefix("New memory:\n"))
        memory = ExtractedMemory(type=new["type"], content=new["content"])
        verdicts = []
        for item in json.loads(stored_part):
            distance = item.pop("distance")
            verdict = judge(memory, KnownMemory(**item), distance, LifecycleConfig())
            verdicts.append({"id": item["id"], "relation": verdict.relation, "reason": "fake"})
        return {"verdicts": verdicts}
    if system.startswith("You judge whether"):
        new_part, stored_part = user.split("\nStored memories:\n", 1)
        new = json.loads(new_part.removeprefix("New memory:\n"))
        stored = [KnownMemory(**item) for item in json.loads(stored_part)]
        memory = ExtractedMemory(type=new["type"], content=new["content"])
        return {"stale": rules.find_contradictions(memory, stored)}
    if system.startswith("You distil"):
        summaries = json.loads(user.split("\n", 1)[1])
        if not summaries:
            return {"learned_pattern": None}
        first = summaries[0]["content"].split(". ")[0]
        return {
            "learned_pattern": {
                "title": "A recurring lesson",
                "content": f"Across {len(summaries)} sessions: {first}.",
                "tags": ["condensed"],
            }
        }
    data = json.loads(user.split("\n", 1)[1])
    conversation = [Message(role=m["role"], content=m["content"]) for m in data]
    mode: ExtractionMode = "normal"
    if "summarise" in system:
        mode = "summary"
    elif "project's files" in system:
        mode = "init"
    found = rules.extract(conversation, mode)
    return {"memories": [m.model_dump() for m in found]}
