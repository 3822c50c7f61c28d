"""What the model is asked, task by task, and the JSON it must answer with.

Data goes to the model as JSON (messages, memories), so quoting never breaks, and every answer
is one JSON object:

- extract (normal, summary, init): ``{"memories": [{"type", "title", "content", "tags",
  "importance"}]}``;
- contradict: ``{"stale": ["<id>", ...]}``;
- condense: ``{"learned_pattern": {"title", "content", "tags"} | null}``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from engram import (
    MEMORY_TYPES,
    ExtractedMemory,
    ExtractionMode,
    JudgeCandidate,
    KnownMemory,
    Message,
)

# What each type the extractor looks for means, from core's table of memory types.
TYPES = {t.name: t.description for t in MEMORY_TYPES if t.extracted}

_RULES = """Rules:
- Keep only durable facts worth remembering in later sessions; skip chatter, questions,
  hypotheticals and anything already obvious from the code.
- Never include secrets: keys, tokens, passwords, personal data.
- Each memory is self-contained: one or two plain sentences a colleague understands without
  the conversation. State the user's preferences as "The user prefers ...".
- importance is 1.0 normally, up to 3.0 for firm rules ("always", "never") and hard limits.
- Answer with one JSON object and nothing else."""

_SHAPE = (
    'Answer: {"memories": [{"type": "<type>", "title": "<at most 10 words>", '
    '"content": "<the memory>", "tags": ["<tag>"], "importance": 1.0}]}'
)


def _types() -> str:
    return "\n".join(f"- {name}: {meaning}" for name, meaning in TYPES.items())


def _messages(messages: Sequence[Message]) -> str:
    return json.dumps([{"role": m.role, "content": m.content} for m in messages], indent=1)


def extraction(mode: ExtractionMode, messages: Sequence[Message]) -> tuple[str, str]:
    """(system, user) for one extraction."""
    if mode == "summary":
        system = (
            "You summarise one coding session between a user and an AI agent for the agent's "
            "long-term memory.\nWrite exactly one memory of type session-summary: what the "
            "session was about, what was decided, fixed and left open, in at most 8 sentences.\n"
            f"{_RULES}\n{_SHAPE}"
        )
        return system, f"The session, as JSON messages:\n{_messages(messages)}"
    if mode == "init":
        system = (
            "You read a software project's files (README, manifests, configuration) for an AI "
            "agent's long-term memory.\nAlways write one project-brief; add tech-context, "
            "architecture and project-config memories the files support.\nMemory types:\n"
            f"{_types()}\n{_RULES}\n{_SHAPE}"
        )
        return system, f"The project's files, as JSON messages:\n{_messages(messages)}"
    system = (
        "You extract durable memories from a conversation between a user and an AI coding "
        f"agent.\nMemory types:\n{_types()}\n{_RULES}\n{_SHAPE}\n"
        'If there is nothing worth remembering, answer {"memories": []}.'
    )
    return system, f"The conversation, as JSON messages:\n{_messages(messages)}"


def contradiction(new: ExtractedMemory, candidates: Sequence[KnownMemory]) -> tuple[str, str]:
    """(system, user) asking which stored memories the new one makes stale."""
    system = (
        "You judge whether a new memory contradicts or replaces stored memories of an AI "
        "agent.\nA stored memory is stale when the new one reverses it (a changed preference, "
        "a decision taken back, a setting with a new value) or states its newer version.\n"
        "Memories that are merely related, or that agree, are not stale. When unsure, it is "
        'not stale.\nAnswer with one JSON object and nothing else: {"stale": ["<id>", ...]}.'
    )
    stored = [
        {"id": c.id, "type": c.type, "content": c.content, "created_at": c.created_at}
        for c in candidates
    ]
    user = (
        "New memory:\n"
        + json.dumps({"type": new.type, "content": new.content})
        + "\nStored memories:\n"
        + json.dumps(stored, indent=1)
    )
    return system, user


def judgment(new: ExtractedMemory, candidates: Sequence[JudgeCandidate]) -> tuple[str, str]:
    """(system, user) asking how the new memory relates to each stored one (the relations of
    ``engram.memories.judge.verdicts``)."""
    system = (
        "You judge how a new memory of an AI agent relates to each stored memory close to it.\n"
        "Relations: same (the same fact, nothing that carries meaning differs: no other number, "
        "date, identifier, path, version, name or polarity; merging loses nothing), "
        "supersedes (the new one reverses the stored one: a changed preference, a decision "
        "taken back, a setting with a new value, a negated statement), conflicts (it may "
        "reverse it, but you are not sure), related (close, but a meaningful difference: both "
        "stay), distinct (unrelated).\nWhen unsure between same and related, answer related; "
        "between supersedes and conflicts, answer conflicts.\nAnswer with one JSON object and "
        'nothing else: {"verdicts": [{"id": "<id>", "relation": "<relation>", "reason": '
        '"<a few words>"}, ...]}, one per stored memory.'
    )
    stored = [
        {
            "id": c.memory.id,
            "type": c.memory.type,
            "content": c.memory.content,
            "created_at": c.memory.created_at,
            "distance": round(c.distance, 3),
        }
        for c in candidates
    ]
    user = (
        "New memory:\n"
        + json.dumps({"type": new.type, "content": new.content})
        + "\nStored memories:\n"
        + json.dumps(stored, indent=1)
    )
    return system, user


def condensation(summaries: Sequence[KnownMemory]) -> tuple[str, str]:
    """(system, user) asking for one learned pattern out of old session summaries."""
    system = (
        "You distil old session summaries of an AI coding agent into one learned-pattern "
        "memory: the lesson, habit or recurring fix they share, in at most 4 sentences.\n"
        "If they share nothing worth keeping, answer null.\nAnswer with one JSON object and "
        'nothing else: {"learned_pattern": {"title": "<at most 10 words>", "content": "...", '
        '"tags": []}} or {"learned_pattern": null}.'
    )
    items = [{"created_at": s.created_at, "content": s.content} for s in summaries]
    return system, "Session summaries, oldest first:\n" + json.dumps(items, indent=1)
