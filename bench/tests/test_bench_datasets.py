"""The BEIR and LoCoMo loaders on the sample layouts, and their errors."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from engram.errors import ConfigError
from engram_bench.datasets import load_beir, load_dataset, load_locomo, resolve
from engram_bench.samples import write_beir, write_locomo, write_samples


def test_beir_joins_title_and_text_and_keeps_only_judged_queries(tmp_path: Path) -> None:
    data = load_beir(write_beir(tmp_path / "set"))
    (group,) = data.groups
    assert data.kind == "beir" and data.metrics == ("ndcg@10", "recall@100")
    assert data.ignore_identical_ids
    assert group.docs[0].text.startswith("Coffee roasting Dark roast coffee")
    assert [q.id for q in group.queries] == ["q1", "q2", "q3", "q4", "q5", "q6"]
    assert group.queries[0].qrels == {"d0": 2, "d1": 1}


def test_locomo_groups_by_conversation_and_parses_evidence(tmp_path: Path) -> None:
    data = load_locomo(write_locomo(tmp_path / "l.json"))
    assert [g.name for g in data.groups] == ["conv-a", "conv-b"]
    conv_a = data.groups[0]
    assert conv_a.docs[0].text == "Ann: I adopted a grey cat named Pixel last week."
    assert conv_a.docs[2].text.endswith("[shares a photo: a cat on a laptop]")
    by_question = {q.text: q for g in data.groups for q in g.queries}
    # "D1:2; D2:4" in one string is two evidence turns; "D" alone is dropped.
    assert by_question["What instrument does Bo play?"].qrels == {"D1:2": 1, "D2:4": 1}
    assert by_question["What is the sourdough starter called?"].qrels == {"D2:1": 1}
    # Evidence that names no turn leaves the question out, and the notes say so.
    assert "What is Bo's dog called?" not in by_question
    assert "1 questions without a usable evidence turn" in data.notes[0]
    assert by_question["When is Ann moving to Lisbon?"].category == "2"


def test_max_queries_cuts_across_groups(tmp_path: Path) -> None:
    data = load_locomo(write_locomo(tmp_path / "l.json"), max_queries=5)
    assert data.query_count == 5
    assert [len(g.queries) for g in data.groups] == [4, 1]


def test_names_resolve_under_the_data_folder_and_layouts_are_detected(tmp_path: Path) -> None:
    write_samples(tmp_path)
    assert load_dataset("scifact", tmp_path).kind == "beir"
    assert load_dataset("locomo", tmp_path).kind == "locomo"
    other = load_dataset(f"mine={tmp_path / 'locomo' / 'data' / 'locomo10.json'}", Path("/none"))
    assert (other.name, other.kind) == ("mine", "locomo")
    assert resolve("x=/a/b", tmp_path) == ("x", Path("/a/b"))


def test_missing_or_foreign_data_is_a_config_error_naming_the_fix(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--data"):
        load_dataset("scifact", tmp_path)
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "notes.txt").write_text("hello")
    with pytest.raises(ConfigError, match="neither a BEIR folder"):
        load_dataset("odd", tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"not": "a list"}))
    with pytest.raises(ConfigError, match="LoCoMo layout"):
        load_locomo(bad)


def test_broken_beir_files_say_which_line(tmp_path: Path) -> None:
    folder = write_beir(tmp_path / "set")
    (folder / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td0\tlots\n")
    with pytest.raises(ConfigError, match=r"test.tsv:2: score 'lots'"):
        load_beir(folder)
    write_beir(folder)
    (folder / "qrels" / "test.tsv").write_text("q404\td0\t1\n")
    with pytest.raises(ConfigError, match="q404"):
        load_beir(folder)
    (folder / "corpus.jsonl").write_text('{"_id": "d0", "text": "x"}\nnot json\n')
    with pytest.raises(ConfigError, match=r"corpus.jsonl:2 is not JSON"):
        load_beir(folder)


def test_gzipped_beir_files_load_like_plain_ones(tmp_path: Path) -> None:
    plain = load_beir(write_beir(tmp_path / "plain"))
    folder = write_beir(tmp_path / "packed")
    for rel in ("corpus.jsonl", "queries.jsonl", "qrels/test.tsv"):
        path = folder / rel
        with gzip.open(path.with_name(path.name + ".gz"), "wb") as fh:
            fh.write(path.read_bytes())
        path.unlink()
    packed = load_dataset("packed", tmp_path)
    assert packed.kind == "beir"
    assert packed.groups[0].docs == plain.groups[0].docs
    assert packed.groups[0].queries == plain.groups[0].queries


def test_a_name_missing_from_data_is_found_among_the_bench_sets(tmp_path: Path) -> None:
    bundled = tmp_path / "bench-data"
    write_beir(bundled / "kept")
    assert resolve("kept", tmp_path / "data", bundled) == ("kept", bundled / "kept")
    write_beir(tmp_path / "data" / "kept")  # --data wins when it has the set
    assert resolve("kept", tmp_path / "data", bundled) == ("kept", tmp_path / "data" / "kept")
    assert resolve("other", tmp_path / "data", bundled) == ("other", tmp_path / "data" / "other")
