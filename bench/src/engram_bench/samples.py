"""Tiny datasets in the BEIR and LoCoMo layouts, written to a folder: the smoke configuration and
the tests run on them, and they show the two formats a new dataset must follow."""

from __future__ import annotations

import json
from pathlib import Path

_TOPICS = (
    ("Coffee roasting", "Dark roast coffee beans are roasted longer and taste bitter and smoky."),
    ("Tea brewing", "Green tea should be brewed below boiling to avoid a bitter taste."),
    ("Sourdough bread", "A sourdough starter ferments flour and water with wild yeast."),
    ("Marathon training", "Long slow runs build endurance for a marathon race."),
    ("Vaccines", "Vaccines train the immune system to recognise a virus without illness."),
    ("Photosynthesis", "Plants turn sunlight, water and carbon dioxide into sugar and oxygen."),
    ("Volcanoes", "Magma rises through the crust and erupts as lava from a volcano."),
    ("Black holes", "A black hole bends light so strongly that nothing escapes its horizon."),
    ("Bees", "Honey bees dance to tell the hive where flowers with nectar are."),
    ("Glaciers", "Glaciers carve valleys as compacted snow slowly flows downhill."),
    ("Antibiotics", "Antibiotics kill bacteria but do nothing against a viral infection."),
    ("Sleep", "Deep sleep helps the brain consolidate memories from the day."),
)
_QUERIES = (
    ("q1", "does roasting coffee longer make it bitter", {"d0": 2, "d1": 1}),
    ("q2", "wild yeast in bread starter", {"d2": 1}),
    ("q3", "how do vaccines protect against a virus", {"d4": 2, "d10": 1}),
    ("q4", "plants make oxygen from sunlight", {"d5": 1}),
    ("q5", "why can light not escape a black hole", {"d7": 1}),
    ("q6", "memory and deep sleep", {"d11": 1}),
)


def write_beir(folder: Path) -> Path:
    """A 12-document BEIR folder with 6 test queries (graded qrels)."""
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with (folder / "corpus.jsonl").open("w", encoding="utf-8") as fh:
        for index, (title, text) in enumerate(_TOPICS):
            fh.write(json.dumps({"_id": f"d{index}", "title": title, "text": text}) + "\n")
    with (folder / "queries.jsonl").open("w", encoding="utf-8") as fh:
        for qid, text, _ in _QUERIES:
            fh.write(json.dumps({"_id": qid, "text": text, "metadata": {}}) + "\n")
        fh.write(json.dumps({"_id": "unjudged", "text": "not evaluated", "metadata": {}}) + "\n")
    lines = ["query-id\tcorpus-id\tscore"]
    lines += [
        f"{qid}\t{doc}\t{grade}" for qid, _, qrels in _QUERIES for doc, grade in qrels.items()
    ]
    (folder / "qrels" / "test.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def _conversation(a: str, b: str, facts: list[tuple[str, str]]) -> dict[str, object]:
    sessions: dict[str, object] = {"speaker_a": a, "speaker_b": b}
    for number, chunk in enumerate((facts[:4], facts[4:]), start=1):
        sessions[f"session_{number}_date_time"] = f"1:00 pm on {number} May, 2023"
        sessions[f"session_{number}"] = [
            {"speaker": a if i % 2 == 0 else b, "dia_id": f"D{number}:{i + 1}", "text": text}
            | ({"blip_caption": caption} if caption else {})
            for i, (text, caption) in enumerate(chunk)
        ]
    return sessions


def write_locomo(path: Path) -> Path:
    """Two short conversations with questions of every category, in the LoCoMo layout."""
    samples = [
        {
            "sample_id": "conv-a",
            "conversation": _conversation(
                "Ann",
                "Bo",
                [
                    ("I adopted a grey cat named Pixel last week.", ""),
                    ("Congrats! I started learning the violin.", ""),
                    ("Pixel sleeps on my keyboard all day.", "a cat on a laptop"),
                    ("I practise violin every evening after work.", ""),
                    ("We are moving to Lisbon in June.", ""),
                    ("Lisbon is lovely, I went there in 2019.", ""),
                    ("My sister visits us in Lisbon next month.", ""),
                    ("I bought a new bow for the violin.", ""),
                ],
            ),
            "qa": [
                {
                    "question": "What is the name of Ann's cat?",
                    "answer": "Pixel",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {
                    "question": "When is Ann moving to Lisbon?",
                    "answer": "June",
                    "evidence": ["D2:1"],
                    "category": 2,
                },
                {
                    "question": "What instrument does Bo play?",
                    "answer": "violin",
                    "evidence": ["D1:2; D2:4"],
                    "category": 1,
                },
                {
                    "question": "What did Ann's cat do on the keyboard?",
                    "answer": "sleep",
                    "evidence": ["D1:3"],
                    "category": 3,
                },
                {
                    "question": "What is Bo's dog called?",
                    "adversarial_answer": "Rex",
                    "evidence": ["D9:99"],
                    "category": 5,
                },
            ],
        },
        {
            "sample_id": "conv-b",
            "conversation": _conversation(
                "Cy",
                "Di",
                [
                    ("I finished my first marathon in Berlin.", ""),
                    ("Amazing, how long did it take?", ""),
                    ("Four hours and ten minutes.", ""),
                    ("I am baking sourdough bread this weekend.", "a loaf of bread"),
                    ("My starter is called Bubbles.", ""),
                    ("I will run the Boston marathon next year.", ""),
                    ("Bubbles needs feeding twice a day.", ""),
                    ("Good luck in Boston!", ""),
                ],
            ),
            "qa": [
                {
                    "question": "Where did Cy run the first marathon?",
                    "answer": "Berlin",
                    "evidence": ["D1:1"],
                    "category": 4,
                },
                {
                    "question": "What is the sourdough starter called?",
                    "answer": "Bubbles",
                    "evidence": ["D2:1", "D"],
                    "category": 1,
                },
                {
                    "question": "Which marathon will Cy run next year?",
                    "answer": "Boston",
                    "evidence": ["D2:2"],
                    "category": 2,
                },
                {
                    "question": "What does Di bake on the weekend?",
                    "answer": "sourdough",
                    "evidence": ["D1:4"],
                    "category": 5,
                },
            ],
        },
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(samples, indent=1), encoding="utf-8")
    return path


def write_samples(folder: Path) -> Path:
    """``folder/scifact`` (BEIR layout) and ``folder/locomo/data/locomo10.json`` (LoCoMo
    layout): the names the default configuration looks for."""
    write_beir(folder / "scifact")
    write_locomo(folder / "locomo" / "data" / "locomo10.json")
    return folder
