"""Retrieval datasets in two public layouts, loaded generically so other sets drop in by path.

- **BEIR** (a folder with ``corpus.jsonl``, ``queries.jsonl`` and ``qrels/<split>.tsv``, each
  possibly gzipped as ``<name>.gz``): one group; a document's text is ``title + " " + text``
  (BEIR and sentence-transformers index both); only queries with qrels are evaluated; nDCG@10
  and Recall@100 as in the BEIR paper.
- **LoCoMo** (a JSON list of samples with ``conversation`` and ``qa``): one group per
  conversation, so each question searches only its own dialogue; a document is one turn
  (``"<speaker>: <text>"``, plus the caption of a shared photo); relevant = the question's
  evidence turns; Recall@5, Recall@10 and nDCG@10, also per question category.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from engram.errors import ConfigError
from engram_bench.dataset_types import (
    BEIR_METRICS,
    LOCOMO_CATEGORIES,
    LOCOMO_METRICS,
    Dataset,
    Doc,
    Group,
    Query,
)
from engram_bench.qa import Budget, qa_query

# Sets kept with the bench (bench/data/<name>/, see its README): looked up after --data.
BUNDLED_DATA = Path(__file__).resolve().parents[2] / "data"
_DIA_ID = re.compile(r"D\d+:\d+")
_SESSION = re.compile(r"session_(\d+)")


def resolve(spec: str, data_dir: Path, bundled: Path = BUNDLED_DATA) -> tuple[str, Path]:
    """``name``, ``name=PATH`` or ``PATH`` → (dataset name, where it is). A bare name is looked
    up in ``data_dir``, then among the sets kept with the bench (``bundled``)."""
    name, sep, raw = spec.partition("=")
    if sep:
        return name.strip(), Path(raw).expanduser()
    given = Path(spec).expanduser()
    if ("/" in spec or given.suffix == ".json") and given.exists():
        return given.stem, given
    first = data_dir / spec
    if not first.exists() and _is_beir(bundled / spec):
        return spec, bundled / spec
    return spec, first


def load_dataset(spec: str, data_dir: Path, *, max_queries: int | None = None) -> Dataset:
    """Load a dataset by name (looked up in ``data_dir``) or path, detecting its layout."""
    from engram_bench import memory_sets

    name, path = resolve(spec, data_dir)
    derived = memory_sets.DERIVED.get(name)
    if derived is not None and not path.exists():
        source, loader = derived
        _, folder = resolve(source, data_dir)
        found = folder if folder.is_file() else _find_locomo_json(folder)
        if found is None:
            raise ConfigError(
                f"dataset {name!r} is read from {source!r}, not found at {folder}; pass --data "
                f"with the folder that holds it"
            )
        return loader(found, name=name, max_queries=max_queries)
    if not path.exists():
        raise ConfigError(
            f"dataset {name!r} not found at {path} nor in {BUNDLED_DATA}; pass --data with the "
            f"folder that holds it (see docs/benchmarks.md), or give its path as {name}=PATH"
        )
    if _is_beir(path):
        return load_beir(path, name=name, max_queries=max_queries)
    if memory_sets.is_longmemeval_sample(path):
        return memory_sets.load_longmemeval_sample(path, name=name, max_queries=max_queries)
    if memory_sets.is_realtalk(path):
        return memory_sets.load_realtalk(path, name=name, max_queries=max_queries)
    if memory_sets.is_temporal_memory(path):
        return memory_sets.load_temporal_memory(path, name=name, max_queries=max_queries)
    if memory_sets.is_prefeval(path):
        return memory_sets.load_prefeval(path, name=name, max_queries=max_queries)
    json_file = path if path.is_file() else _find_locomo_json(path)
    if json_file is not None:
        return load_locomo(json_file, name=name, max_queries=max_queries)
    raise ConfigError(
        f"{path} is neither a BEIR folder (corpus.jsonl, queries.jsonl, qrels/test.tsv) nor a "
        f"LoCoMo JSON file; point the dataset at one of those layouts"
    )


def load_beir(
    path: Path, *, name: str | None = None, split: str = "test", max_queries: int | None = None
) -> Dataset:
    """A BEIR-layout folder: every document, and the ``split`` queries that have qrels."""
    corpus = [
        Doc(str(row["_id"]), _join(row.get("title"), row.get("text")))
        for row in _jsonl(path / "corpus.jsonl")
    ]
    texts = {str(row["_id"]): str(row.get("text", "")) for row in _jsonl(path / "queries.jsonl")}
    qrels = _read_qrels(path / "qrels" / f"{split}.tsv")
    missing = [qid for qid in qrels if qid not in texts]
    if missing:
        raise ConfigError(
            f"{path / 'qrels' / f'{split}.tsv'} names queries missing from queries.jsonl "
            f"({', '.join(missing[:5])}); the files come from different copies of the dataset"
        )
    queries = [Query(qid, texts[qid], judged) for qid, judged in qrels.items()]
    if max_queries is not None:
        queries = queries[:max_queries]
    return Dataset(
        name=name or path.name,
        kind="beir",
        path=path,
        groups=[Group(name or path.name, corpus, queries)],
        metrics=BEIR_METRICS,
        ignore_identical_ids=True,
        notes=[f"{len(corpus)} documents (title + text), {len(queries)} {split} queries"],
    )


def load_locomo(path: Path, *, name: str | None = None, max_queries: int | None = None) -> Dataset:
    """A LoCoMo JSON file: one group per conversation, one document per dialogue turn."""
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read LoCoMo file {path}: {exc}; check the file") from None
    if not isinstance(samples, list) or not all(_is_locomo_sample(s) for s in samples):
        raise ConfigError(
            f"{path} is not in the LoCoMo layout (a list of samples with 'conversation' and "
            f"'qa'); point the dataset at locomo10.json or a file of the same shape"
        )
    groups: list[Group] = []
    budget = Budget(max_queries)
    dropped_refs = dropped_questions = 0
    for index, sample in enumerate(samples):
        group_name = str(sample.get("sample_id") or f"conversation-{index}")
        docs = list(_turns(sample["conversation"]))
        known = {d.id for d in docs}
        queries: list[Query] = []
        for q_index, qa in enumerate(sample["qa"]):
            refs = _DIA_ID.findall(" ".join(str(e) for e in qa.get("evidence") or []))
            relevant = {ref: 1 for ref in refs if ref in known}
            dropped_refs += len(set(refs) - relevant.keys())
            if not relevant:
                dropped_questions += 1
                continue
            queries.append(qa_query(group_name, q_index, qa, relevant))
        if budget.add(groups, group_name, docs, queries):
            break
    dataset = Dataset(
        name=name or path.stem,
        kind="locomo",
        path=path,
        groups=groups,
        metrics=LOCOMO_METRICS,
        category_labels=dict(LOCOMO_CATEGORIES),
    )
    dataset.notes.append(
        f"{len(groups)} conversations indexed separately, {dataset.doc_count} turns, "
        f"{dataset.query_count} questions; {dropped_questions} questions without a usable "
        f"evidence turn left out, {dropped_refs} evidence references match no turn"
    )
    return dataset


def _turns(conversation: dict[str, Any]) -> Iterator[Doc]:
    sessions = sorted(
        (int(m.group(1)), key)
        for key in conversation
        if (m := _SESSION.fullmatch(key)) and isinstance(conversation[key], list)
    )
    for _, key in sessions:
        for turn in conversation[key]:
            text = f"{turn.get('speaker', '')}: {turn.get('text', '')}"
            caption = turn.get("blip_caption")
            if caption:
                text += f" [shares a photo: {caption}]"
            yield Doc(str(turn["dia_id"]), text)


def _is_locomo_sample(sample: object) -> bool:
    return isinstance(sample, dict) and "conversation" in sample and "qa" in sample


def _find_locomo_json(folder: Path) -> Path | None:
    if not folder.is_dir():
        return None
    for candidate in sorted(folder.rglob("*.json")):
        try:
            with candidate.open(encoding="utf-8") as fh:
                head = fh.read(4096)
        except (OSError, UnicodeDecodeError):
            continue
        if head.lstrip().startswith("[") and ('"qa"' in head or '"conversation"' in head):
            return candidate
    return None


def _join(title: object, text: object) -> str:
    parts = [str(p).strip() for p in (title, text) if p]
    return " ".join(p for p in parts if p)


def _is_beir(folder: Path) -> bool:
    return folder.is_dir() and _present(folder / "corpus.jsonl") is not None


def _present(path: Path) -> Path | None:
    """``path`` itself, or its gzipped copy ``<path>.gz``, whichever exists (else None)."""
    for candidate in (path, path.with_name(path.name + ".gz")):
        if candidate.is_file():
            return candidate
    return None


def _open_text(path: Path, what: str) -> IO[str]:
    """Open ``path`` (or ``<path>.gz``) as UTF-8 text; missing → one clear error."""
    found = _present(path)
    if found is None:
        raise ConfigError(f"{path} (or {path.name}.gz) is missing; {what}")
    if found.suffix == ".gz":
        return io.TextIOWrapper(gzip.open(found, "rb"), encoding="utf-8", newline="")
    return found.open(encoding="utf-8", newline="")


def _jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with _open_text(path, "a BEIR dataset folder needs it") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ConfigError(
                    f"{path}:{number} is not JSON ({exc}); fix or re-download it"
                ) from None
            if not isinstance(row, dict) or "_id" not in row:
                raise ConfigError(f"{path}:{number} has no '_id'; it is not a BEIR file")
            yield row


def _read_qrels(path: Path) -> dict[str, dict[str, int]]:
    out: dict[str, dict[str, int]] = {}
    with _open_text(path, "a BEIR dataset folder needs qrels/<split>.tsv") as fh:
        for number, row in enumerate(csv.reader(fh, delimiter="\t"), start=1):
            if not row or (number == 1 and not row[-1].strip().lstrip("-").isdigit()):
                continue  # blank line or the header
            if len(row) < 3:
                raise ConfigError(f"{path}:{number} needs query-id, corpus-id and score")
            try:
                grade = int(row[2])
            except ValueError:
                raise ConfigError(f"{path}:{number}: score {row[2]!r} is not an integer") from None
            out.setdefault(row[0], {})[row[1]] = grade
    return out
