"""The conversational-memory sets: LongMemEval's sample layout and LoCoMo's observations and
session summaries as the memory, with qrels taken from the files' own evidence marks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram.errors import ConfigError
from engram_bench.datasets import load_dataset
from engram_bench.memory_sets import load_locomo_observations, load_locomo_summaries
from engram_bench.paired import half


def _turn(tid: str, role: str, text: str, answer: bool = False) -> dict[str, object]:
    return {"id": tid, "role": role, "content": text, "metadata": {"has_answer": answer}}


def write_longmemeval(folder: Path) -> Path:
    folder.mkdir(parents=True)
    sessions = [
        {
            "id": "s1",
            "turns": [
                _turn("s1_0", "user", "I graduated in Business Administration.", True),
                _turn("s1_1", "assistant", "Congratulations!"),
            ],
        },
        {
            "id": "s2",
            "turns": [
                _turn("s2_0", "user", "My commute is 45 minutes."),
                _turn("s2_1", "assistant", "That is long."),
            ],
        },
    ]
    questions = [
        {
            "id": "q1",
            "category": "information_extraction",
            "question": "What degree did I get?",
            "ground_truth": {"supporting_session_ids": ["s1"]},
        },
        {
            "id": "q2",
            "category": "information_extraction",
            "question": "How long is my commute?",
            "ground_truth": {"supporting_session_ids": ["s2"]},
        },
    ]
    (folder / "sessions.jsonl").write_text("\n".join(json.dumps(s) for s in sessions) + "\n")
    (folder / "questions.jsonl").write_text("\n".join(json.dumps(q) for q in questions) + "\n")
    return folder


def test_longmemeval_sample_is_one_memory_with_marked_turns_as_evidence(tmp_path: Path) -> None:
    data = load_dataset(f"lme={write_longmemeval(tmp_path / 'lme')}", tmp_path)
    (group,) = data.groups
    assert [d.text for d in group.docs][:2] == [
        "user: I graduated in Business Administration.",
        "assistant: Congratulations!",
    ]
    # q2's session marks no turn: it has no turn-level evidence and is left out.
    assert [(q.id, q.qrels) for q in group.queries] == [("q1", {"s1_0": 1})]
    assert "recall@100" in data.metrics and "1 left out" in data.notes[0]


def _locomo(path: Path) -> Path:
    sample = {
        "sample_id": "conv-a",
        "conversation": {},
        "observation": {
            "session_2_observation": {"Ann": [["Ann moved to Oslo.", "D2:4"]]},
            "session_1_observation": {
                "Ann": [["Ann adopted a cat named Pixel.", "D1:1"]],
                "Bo": [["Bo plays the cello.", ["D1:2", "D1:3"]]],
            },
        },
        "session_summary": {
            "session_1_summary": "Ann and Bo met.",
            "session_2_summary": "Ann moved.",
        },
        "qa": [
            {"question": "What is Ann's cat called?", "evidence": ["D1:1"], "category": 4},
            {"question": "What does Bo play?", "evidence": ["D1:3"], "category": 4},
            {"question": "Where did Ann move?", "evidence": ["D2:4", "D9:9"], "category": 1},
            {"question": "Unknown?", "evidence": ["D7:1"], "category": 2},
        ],
    }
    path.write_text(json.dumps([sample]), encoding="utf-8")
    return path


def test_locomo_observations_are_relevant_through_their_turns(tmp_path: Path) -> None:
    data = load_locomo_observations(_locomo(tmp_path / "l.json"))
    (group,) = data.groups
    texts = {d.id: d.text for d in group.docs}
    assert list(texts.values()) == [
        "Ann adopted a cat named Pixel.",
        "Bo plays the cello.",
        "Ann moved to Oslo.",
    ]
    by_text = {q.text: {texts[d] for d in q.qrels} for q in group.queries}
    assert by_text == {
        "What is Ann's cat called?": {"Ann adopted a cat named Pixel."},
        "What does Bo play?": {"Bo plays the cello."},
        "Where did Ann move?": {"Ann moved to Oslo."},
    }
    assert "1 questions whose evidence turns reach no observation left out" in data.notes[0]


def test_locomo_summaries_are_relevant_by_session(tmp_path: Path) -> None:
    data = load_locomo_summaries(_locomo(tmp_path / "l.json"))
    (group,) = data.groups
    assert [(d.id, d.text) for d in group.docs] == [("S1", "Ann and Bo met."), ("S2", "Ann moved.")]
    assert [q.qrels for q in group.queries] == [{"S1": 1}, {"S1": 1}, {"S2": 1}]


def test_a_derived_set_is_read_from_its_source_folder(tmp_path: Path) -> None:
    (tmp_path / "locomo").mkdir()
    _locomo(tmp_path / "locomo" / "locomo10.json")
    data = load_dataset("locomo-summaries", tmp_path)
    assert data.name == "locomo-summaries" and data.query_count == 3
    with pytest.raises(ConfigError, match="read from 'locomo'"):
        load_dataset("locomo-observations", tmp_path / "elsewhere")


def test_queries_split_in_two_stable_halves() -> None:
    names = [half(f"conv-{i}/q{j}") for i in range(10) for j in range(50)]
    assert set(names) == {"dev", "held-out"}
    assert 0.4 < names.count("dev") / len(names) < 0.6
    assert names == [half(f"conv-{i}/q{j}") for i in range(10) for j in range(50)]


def _message(dia_id: str, speaker: str, text: str, caption: str | None = None) -> dict[str, object]:
    message: dict[str, object] = {
        "clean_text": text,
        "speaker": speaker,
        "date_time": "30.12.2023, 00:33:00",
        "img_file": [],
        "img_url": [],
        "dia_id": dia_id,
    }
    if caption:
        message["blip_caption"] = caption
    return message


def write_realtalk(folder: Path) -> Path:
    """Two REALTALK pairs in the files' own shape: ``name``, ``session_N``, ``events_session_N``,
    ``session_N_date_time`` and ``qa`` with LoCoMo-style evidence ids."""
    folder.mkdir(parents=True)
    first = {
        "name": {"speaker_1": "Emi", "speaker_2": "elise"},
        "session_2": [_message("D2:1", "elise", "We went to Art Basel.", "a painting on a wall")],
        "session_1": [
            _message("D1:1", "Emi", "I'm taking a cooking class today!"),
            _message("D1:2", "elise", "Going to a bar in Miami."),
        ],
        "events_session_1": {"agent_a": [], "agent_b": []},
        "session_1_date_time": "30.12.2023",
        "qa": [
            {"question": "What class did Emi take?", "evidence": ["D1:1"], "category": 2},
            {"question": "Where did Elise go?", "evidence": ["D 2:1", "D1:2"], "category": 1},
            {"question": "Unmarked?", "evidence": [], "category": 3},
            {"question": "Missing turn?", "evidence": ["D9:9"], "category": 3},
        ],
    }
    second = {
        "name": {"speaker_1": "Kevin", "speaker_2": "Paola"},
        "session_1": [_message("D1:1", "Kevin", "I run every morning.")],
        "qa": [{"question": "When does Kevin run?", "evidence": ["D1:1"], "category": 2}],
    }
    (folder / "Chat_10_Kevin_Paola.json").write_text(json.dumps(second), encoding="utf-8")
    (folder / "Chat_1_Emi_Elise.json").write_text(json.dumps(first), encoding="utf-8")
    return folder


def test_realtalk_is_one_group_per_pair_with_evidence_messages(tmp_path: Path) -> None:
    data = load_dataset("realtalk", write_realtalk(tmp_path / "realtalk").parent)
    assert [g.name for g in data.groups] == ["Chat_1_Emi_Elise", "Chat_10_Kevin_Paola"]
    first = data.groups[0]
    assert [(d.id, d.text) for d in first.docs] == [
        ("D1:1", "Emi: I'm taking a cooking class today!"),
        ("D1:2", "elise: Going to a bar in Miami."),
        ("D2:1", "elise: We went to Art Basel. [shares a photo: a painting on a wall]"),
    ]
    # "D 2:18"-style ids are read without the space; a question with no known turn is left out.
    assert [(q.id, q.qrels, q.category) for q in first.queries] == [
        ("Chat_1_Emi_Elise/q0", {"D1:1": 1}, "2"),
        ("Chat_1_Emi_Elise/q1", {"D2:1": 1, "D1:2": 1}, "1"),
    ]
    assert data.kind == "locomo" and data.query_count == 3
    assert "2 questions without a usable evidence message left out" in data.notes[0]
    assert "1 evidence references match no message" in data.notes[0]


def write_tmd(folder: Path) -> Path:
    """Zyphra's Temporal Memory Dataset in its own shape: ``ConversationData/<n>.json`` and the
    content + time questions with ``relevant_docs`` (turn ``response_number``s)."""
    (folder / "ConversationData").mkdir(parents=True)
    (folder / "TestData" / "content_time_qs").mkdir(parents=True)
    conversation = {
        "speaker_a": "Caroline",
        "speaker_b": "Melanie",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Caroline", "dia_id": "D1:1", "text": "Hey Mel!", "response_number": "0"},
            {
                "speaker": "Melanie",
                "dia_id": "D1:2",
                "text": "I painted a lake sunrise.",
                "response_number": "1",
                "blip_caption": "a painting of a sunrise",
            },
        ],
    }
    (folder / "ConversationData" / "26.json").write_text(json.dumps(conversation))
    tests = {
        "file_indexes": [26],
        "file_26": [
            {"questions": ["What did Melanie paint on May 8th?"], "relevant_docs": [1]},
            {"questions": ["What did nobody say?"], "relevant_docs": [99]},
        ],
    }
    path = folder / "TestData" / "content_time_qs" / "content_time_qs.json"
    path.write_text(json.dumps(tests))
    return folder


def test_temporal_memory_questions_point_at_response_numbers(tmp_path: Path) -> None:
    data = load_dataset(f"tmd={write_tmd(tmp_path / 'tmd')}", tmp_path)
    (group,) = data.groups
    assert group.name == "conv-26"
    assert [(d.id, d.text) for d in group.docs] == [
        ("0", "Caroline: Hey Mel!"),
        ("1", "Melanie: I painted a lake sunrise. [shares a photo: a painting of a sunrise]"),
    ]
    assert [(q.id, q.text, q.qrels) for q in group.queries] == [
        ("conv-26/q0", "What did Melanie paint on May 8th?", {"1": 1})
    ]
    assert "1 without a known relevant turn left out" in data.notes[0]


def test_a_broken_realtalk_file_is_one_clear_error(tmp_path: Path) -> None:
    folder = write_realtalk(tmp_path / "rt")
    (folder / "Chat_2_Bad.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"cannot read .*Chat_2_Bad\.json"):
        load_dataset(f"rt={folder}", tmp_path)


def write_prefeval(folder: Path) -> Path:
    """PrefEval's explicit preferences in their own shape: one JSON list per topic."""
    (folder / "explicit_preference").mkdir(parents=True)
    travel = [
        {
            "preference": "I avoid gluten because of a severe intolerance.",
            "question": "Which restaurants in Rome would you recommend?",
            "explanation": "Roman cuisine relies on pasta.",
        },
        {
            "preference": "I prefer not to stay in high-rise buildings.",
            "question": "Where should I stay in Chicago?",
            "explanation": "Chicago hotels are often towers.",
        },
    ]
    food = [
        {
            "preference": "I avoid gluten because of a severe intolerance.",
            "question": "What should I bake for a party?",
            "explanation": "Most cakes use wheat flour.",
        }
    ]
    (folder / "explicit_preference" / "travel_restaurant.json").write_text(json.dumps(travel))
    (folder / "explicit_preference" / "lifestyle_dietary.json").write_text(json.dumps(food))
    return folder


def test_prefeval_requests_point_at_their_own_stated_preference(tmp_path: Path) -> None:
    data = load_dataset("prefeval", write_prefeval(tmp_path / "prefeval").parent)
    (group,) = data.groups
    # A preference stated under two topics is one memory; both requests point at it.
    assert [(d.id, d.text) for d in group.docs] == [
        ("lifestyle_dietary/0", "I avoid gluten because of a severe intolerance."),
        ("travel_restaurant/1", "I prefer not to stay in high-rise buildings."),
    ]
    assert [(q.id, q.qrels, q.category) for q in group.queries] == [
        ("lifestyle_dietary/q0", {"lifestyle_dietary/0": 1}, "lifestyle_dietary"),
        ("travel_restaurant/q0", {"lifestyle_dietary/0": 1}, "travel_restaurant"),
        ("travel_restaurant/q1", {"travel_restaurant/1": 1}, "travel_restaurant"),
    ]
    assert data.notes == ["2 distinct stated preferences in one memory, 3 requests (0 repeated)"]
