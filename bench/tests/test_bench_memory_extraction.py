"""The bench's LoCoMo extraction part on a tiny slice in LoCoMo's layout (``hash`` embedder, so
the figures are about the plumbing): every message is seen, speakers are kept apart, the
automatic junk checks and the verbatim reference work, and the markdown and ``python -m`` entry
print them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engram_bench.memory.extraction import (
    junk_reason,
    load_sessions,
    main,
    render_extraction,
    run_extraction,
    source_speaker,
)

ANNA = [
    "I have a dog named Max and he loves the beach.",
    "My sister is a nurse in Boston.",
    "I'm going to Paris next month with my sister.",
    "Thanks, see you soon!",
]
BEN = [
    "That's great, Anna!",
    "I adopted a cat named Luna last week.",
    "Don't miss a beat!",
    "I finished my first marathon on Sunday.",
]


def _locomo(tmp_path: Path) -> Path:
    turns = []
    for i, (a, b) in enumerate(zip(ANNA, BEN, strict=True)):
        turns.append({"speaker": "Anna", "dia_id": f"D1:{2 * i + 1}", "text": a})
        turns.append({"speaker": "Ben", "dia_id": f"D1:{2 * i + 2}", "text": b})
    sample = {
        "sample_id": "tiny",
        "qa": [],
        "conversation": {
            "speaker_a": "Anna",
            "speaker_b": "Ben",
            "session_1_date_time": "1:00 pm on 1 May, 2023",
            "session_1": turns,
        },
        "observation": {
            "session_1_observation": {
                "Anna": [
                    ["Anna has a dog named Max who loves the beach.", "D1:1"],
                    ["Anna's sister is a nurse in Boston.", "D1:3"],
                    ["Anna is going to Paris next month with her sister.", "D1:5"],
                ],
                "Ben": [
                    ["Ben adopted a cat named Luna last week.", "D1:4"],
                    ["Ben finished his first marathon on Sunday.", "D1:8"],
                ],
            }
        },
    }
    folder = tmp_path / "data" / "locomo"
    folder.mkdir(parents=True)
    (folder / "locomo10.json").write_text(json.dumps([sample]), encoding="utf-8")
    return tmp_path / "data"


def test_the_tiny_slice_is_captured_whole_with_speakers_kept_apart(tmp_path: Path) -> None:
    data = _locomo(tmp_path)
    (session,) = load_sessions(data)
    assert session.speakers == ("Anna", "Ben") and len(session.gold) == 5
    result = run_extraction(data, embedder="hash")
    assert result["sessions"] == 1 and result["turns"] == 8 and result["gold_facts"] == 5
    assert result["seen"] == 1.0 and result["met"]["seen"]
    assert result["wrong_speaker"] == 0 and result["junk"] == 0.0
    # each side keeps its own facts: Anna's three as the user's, Ben's two as the user's on his
    assert result["types"] == {"fact": 5}
    assert 0.0 <= result["precision"] <= 1.0 and 0.0 <= result["recall"] <= 1.0
    assert result["verbatim"]["memories"] == 8
    text = render_extraction(result)
    assert "| messages seen | 100.0% | 100% | met |" in text
    assert "| wrong-speaker memories | 0 | 0 | met |" in text


def test_the_automatic_checks_catch_what_they_name() -> None:
    assert junk_reason("The user loves to.") == "fragment"
    assert junk_reason("Don't miss a beat, you are great.") == "aimed at the listener"
    assert junk_reason("Thanks for the tip about the cache.") == "pleasantry"
    assert junk_reason("It was so powerful and moving.") == "pronoun subject"
    assert junk_reason("The user went hiking with my dad last weekend.") == "first person"
    assert junk_reason("The user wants to pass it on to others.") == "vague reference"
    assert junk_reason("The user has a dog named Max.") is None


def test_a_memory_is_traced_to_the_turn_that_said_it(tmp_path: Path) -> None:
    (session,) = load_sessions(_locomo(tmp_path))
    assert source_speaker("The user adopted a cat named Luna.", session) == "Ben"
    assert source_speaker("The user's sister is a nurse.", session) == "Anna"


def test_the_module_entry_prints_the_figures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data", str(_locomo(tmp_path)), "--embedder", "hash"]) == 0
    assert "Extraction on LoCoMo (rules, hash embedder)" in capsys.readouterr().out
    assert main(["--data", str(tmp_path / "nowhere"), "--embedder", "hash"]) == 2
    assert "no LoCoMo data under" in capsys.readouterr().out


def test_the_halves_split_conversations_by_index_parity(tmp_path: Path) -> None:
    data = _locomo(tmp_path)
    path = data / "locomo" / "locomo10.json"
    (sample,) = json.loads(path.read_text(encoding="utf-8"))
    second = {**sample, "sample_id": "second"}
    path.write_text(json.dumps([sample, second]), encoding="utf-8")
    assert [s.name for s in load_sessions(data, half="dev")] == ["tiny/s1"]
    assert [s.name for s in load_sessions(data, half="held-out")] == ["second/s1"]
    assert len(load_sessions(data)) == 2


def test_the_sample_names_each_memorys_speaker(tmp_path: Path) -> None:
    result = run_extraction(_locomo(tmp_path), embedder="hash", sample=50)
    about = {m["text"]: m["about"] for m in result["sample"]}
    assert len(about) == result["memories"] == 5
    assert about["The user adopted a cat named Luna last week."] == "Ben"
    assert about["The user's sister is a nurse in Boston."] == "Anna"
