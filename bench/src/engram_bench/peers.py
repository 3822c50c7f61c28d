"""Other retrieval systems on the same data and the same vectors, where one is installed.

A peer runs in its own Python (``--peer-python``; default: this one), because its dependencies
(txtai needs PyTorch and faiss) do not belong in engram's environment. The peer returns ranked
ids; engram's own metric code scores them, so both sides are measured the same way. A peer that
is not importable is reported as "not installed", never as a failure.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engram_bench.dataset_types import Dataset
from engram_bench.quality import Embedded, evaluate
from engram_bench.timing import summarize_ms

Log = Callable[[str], None]
WORKER = Path(__file__).with_name("txtai_worker.py")
# Cheap: finds the packages without importing them (importing txtai loads PyTorch).
PROBE = (
    "import json, importlib.util as u, importlib.metadata as m; "
    "ok = all(u.find_spec(n) for n in ('txtai', 'faiss', 'torch')); "
    "print(json.dumps({'txtai': m.version('txtai') if ok else None}))"
)
KNOWN = ("txtai",)
# The peer's own hybrid is the comparison; its vector and keyword modes triple the time (over
# five minutes on LoCoMo's 1,981 questions) and are not needed for it.
PEER_MODES = ("hybrid",)


def probe_txtai(python: Path) -> str | None:
    """txtai's version in ``python``, or None when it cannot be imported there."""
    try:
        proc = subprocess.run(
            [str(python), "-c", PROBE],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if proc.returncode != 0:
        return None
    try:
        version: str | None = json.loads(proc.stdout.strip().splitlines()[-1])["txtai"]
    except (ValueError, KeyError, IndexError):
        return None
    return version


def run_txtai(
    python: Path,
    dataset: Dataset,
    embedded: Embedded,
    workdir: Path,
    modes: Sequence[str] = PEER_MODES,
) -> list[dict[str, Any]]:
    """txtai's results on ``dataset`` in ``modes`` (of hybrid, vector, keyword), scored like
    engram's rows."""
    depth = max(int(m.partition("@")[2]) for m in dataset.metrics)
    limit = depth + (1 if dataset.ignore_identical_ids else 0)
    texts, rows, groups = _job_inputs(dataset, embedded)
    workdir.mkdir(parents=True, exist_ok=True)
    vectors = workdir / "txtai-vectors.npy"
    np.save(vectors, np.asarray(rows, dtype=np.float32))
    job = workdir / "txtai-job.json"
    result = workdir / "txtai-result.json"
    job.write_text(
        json.dumps(
            {
                "vectors": str(vectors),
                "texts": texts,
                "groups": groups,
                "limit": limit,
                "modes": list(modes),
                "result": str(result),
            }
        )
    )
    proc = subprocess.run(
        [str(python), str(WORKER), str(job)],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    if proc.returncode != 0 or not result.exists():
        tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ["no output"]
        raise RuntimeError(f"txtai worker exited {proc.returncode}: {tail[0]}")
    answer = json.loads(result.read_text())
    return [
        {
            "store": "txtai",
            "embedder": embedded.embedder,
            "mode": mode,
            **evaluate(dataset, _cleaned(dataset, found, depth)),
            "latency_ms": summarize_ms(answer["latency_s"][mode]),
            "index_seconds": answer["index_seconds"],
            "versions": answer["versions"],
        }
        for mode, found in answer["retrieved"].items()
    ]


def _job_inputs(
    dataset: Dataset, embedded: Embedded
) -> tuple[list[str], list[list[float]], list[dict[str, Any]]]:
    """Every distinct text (documents and queries) with its vector, and the groups by id: what
    the worker indexes and asks, with the very vectors engram used."""
    texts: dict[str, int] = {}
    rows: list[list[float]] = []
    groups = []
    for group, matrix in zip(dataset.groups, embedded.groups, strict=True):
        for doc, vector in zip(group.docs, matrix.tolist(), strict=True):
            if doc.text not in texts:
                texts[doc.text] = len(rows)
                rows.append(vector)
        for query in group.queries:
            if query.text not in texts:
                texts[query.text] = len(rows)
                rows.append(embedded.queries[query.text])
        groups.append(
            {
                "docs": [[d.id, d.text] for d in group.docs],
                "queries": [[q.id, q.text] for q in group.queries],
            }
        )
    return list(texts), rows, groups


def _cleaned(dataset: Dataset, found: dict[str, list[str]], depth: int) -> dict[str, list[str]]:
    """The worker's ids per query, the query's own id left out where the dataset says so."""
    cleaned = {}
    for group in dataset.groups:
        for query in group.queries:
            ids = found.get(query.id, [])
            if dataset.ignore_identical_ids:
                ids = [i for i in ids if i != query.id]
            cleaned[query.id] = ids[:depth]
    return cleaned


def run_peers(
    peers: list[str],
    python: Path | None,
    datasets: list[Dataset],
    embedded: dict[str, Embedded],
    *,
    workdir: Path,
    log: Log,
) -> dict[str, Any]:
    """Each requested peer on each dataset, with the first embedder's vectors."""
    interpreter = python or Path(sys.executable)
    out: dict[str, Any] = {"python": str(interpreter), "peers": {}}
    for peer in peers:
        if peer not in KNOWN:
            out["peers"][peer] = {"status": f"unknown peer (known: {', '.join(KNOWN)})"}
            continue
        version = probe_txtai(interpreter)
        if version is None:
            out["peers"][peer] = {
                "status": "not installed",
                "hint": "install txtai, faiss-cpu and torch==2.13.0 (CPU) in a separate venv and "
                "pass --peer-python PATH/bin/python",
            }
            log(f"peers: {peer} is not importable by {interpreter}; skipped")
            continue
        rows: list[dict[str, Any]] = []
        errors: list[str] = []
        for dataset in datasets:
            vectors = embedded.get(dataset.name)
            if vectors is None:
                continue
            log(f"peers: txtai {version} on {dataset.name} with {vectors.embedder} vectors")
            try:
                for row in run_txtai(
                    interpreter, dataset, vectors, workdir / f"txtai-{dataset.name}"
                ):
                    rows.append({"dataset": dataset.name, **row})
            except Exception as exc:
                errors.append(f"{dataset.name}: {type(exc).__name__}: {exc}")
                log(f"peers: txtai on {dataset.name} failed: {exc}")
        out["peers"][peer] = {"status": "ran", "version": version, "rows": rows, "errors": errors}
    return out
