"""The re-index against its floor, in one run: a no-op ``Memory.index()`` and a one-file edit,
each paired with ``os.walk`` + one ``os.stat`` a file over the same vault (all a no-op must do).

Both sides run in this process, taken in turn (floor, index, floor, index ...), so a busy
machine slows both alike; a figure is the median of the runs, and the ratio the median of each
pair's ratio. Wall time is what a user waits; CPU time (``time.process_time``) is shown beside
it, since on a shared machine the wall clock also counts the time spent waiting for a core.
A one-file edit is held to the floor x the target plus what embedding that file's chunks takes
alone (timed on the uncached embedder). The cold CLI (``engram index`` in a new process: start,
imports, config, store open, the no-op) is reported apart, next to a bare ``python -c pass``:
it is what a host hook pays, not what the indexing does.

Run alone: ``python -m engram_bench.reindex --files 1000 --files 10000 --out bench/results``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from engram.config import EngramConfig
from engram.ingest.document_ids import document_id_for
from engram.memory import Memory
from engram_bench import machine, vault
from engram_bench.stores import fresh_folder

TARGET = 1.5  # a no-op re-index within this many times the walk + stat floor
RUNS = 11  # pairs (floor, index) whose medians are reported
EDITS = 5  # one-file edits timed
CLI_RUNS = 5
Clock = Callable[[], float]


def walk_and_stat(root: Path) -> None:
    """The floor: every file under ``root`` found and stat'ed, nothing else."""
    for folder, _, names in os.walk(root):
        for name in names:
            os.stat(os.path.join(folder, name))


def _timed(call: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    call()
    return time.perf_counter() - wall, time.process_time() - cpu


def _medians(pairs: list[tuple[tuple[float, float], tuple[float, float]]]) -> dict[str, float]:
    """Medians of the floor and the call, wall and CPU, and of each pair's ratio."""
    out: dict[str, float] = {}
    for clock, i in (("wall", 0), ("cpu", 1)):
        floors = [f[i] for f, _ in pairs]
        calls = [c[i] for _, c in pairs]
        out[f"floor_{clock}_s"] = statistics.median(floors)
        out[f"call_{clock}_s"] = statistics.median(calls)
        out[f"ratio_{clock}"] = statistics.median(
            c / f for f, c in zip(floors, calls, strict=True) if f > 0
        )
    return out


def noop(memory: Memory, root: Path, runs: int = RUNS) -> dict[str, Any]:
    """The no-op re-index paired with its floor, ``runs`` times."""
    pairs = []
    unchanged = 0
    for _ in range(runs):
        floor = _timed(lambda: walk_and_stat(root))
        began = time.perf_counter(), time.process_time()
        report = memory.index([root])
        call = time.perf_counter() - began[0], time.process_time() - began[1]
        pairs.append((floor, call))
        unchanged = report.unchanged
        if report.new or report.changed or report.removed:
            raise RuntimeError(f"the no-op re-index was not one: {report.summary()}")
    return {**_medians(pairs), "unchanged": unchanged, "runs": runs}


def one_file_edit(
    memory: Memory, root: Path, paths: list[Path], edits: int = EDITS
) -> dict[str, Any]:
    """A one-file edit indexed, ``edits`` times (a different file each time), with the floor
    beside it and the time embedding that file's chunks takes alone."""
    pairs, embeds = [], []
    for n in range(edits):
        path = paths[(len(paths) // 2 + n * 7) % len(paths)]
        vault.change([path], 1.0, f"edit {n}")
        floor = _timed(lambda: walk_and_stat(root))
        began = time.perf_counter(), time.process_time()
        report = memory.index([root])
        call = time.perf_counter() - began[0], time.process_time() - began[1]
        if report.changed != 1:
            raise RuntimeError(f"the one-file edit was not seen as one: {report.summary()}")
        pairs.append((floor, call))
        embeds.append(_embedding_seconds(memory, document_id_for(path, memory.config.root)))
    out = _medians(pairs)
    out["embedding_s"] = statistics.median(embeds)
    out["budget_s"] = TARGET * out["floor_wall_s"] + out["embedding_s"]
    return out


def _embedding_seconds(memory: Memory, document_id: str) -> float:
    """Seconds the embedder itself (no cache) takes for one document's chunks."""
    texts = [
        c.text
        for batch in memory.store.iter_chunks()
        for c in batch
        if c.document_id == document_id
    ]
    began = time.perf_counter()
    memory.embedder.inner.embed(texts, "document")
    return time.perf_counter() - began


def cold_cli(project: Path, runs: int = CLI_RUNS) -> dict[str, float]:
    """Median seconds of ``engram index`` (a no-op) and of ``python -c pass``, new processes."""
    engram = [sys.executable, "-m", "engram", "index"]

    def run(argv: list[str]) -> float:
        began = time.perf_counter()
        subprocess.run(argv, cwd=project, capture_output=True, check=True, timeout=600)
        return time.perf_counter() - began

    env_file = project / "none.toml"
    os.environ.setdefault("ENGRAM_USER_CONFIG", str(env_file))
    cli = [run(engram) for _ in range(runs)]
    bare = [run([sys.executable, "-c", "pass"]) for _ in range(runs)]
    return {"engram_index_s": statistics.median(cli), "python_pass_s": statistics.median(bare)}


def measure(
    files: int, folder: Path, embedder: str = "hash", reuse: bool = False
) -> dict[str, Any]:
    """Build a vault of ``files`` notes, index it once, then measure its re-index. With
    ``reuse``, a vault and index a previous run left in ``folder`` are taken as they are (the
    first index then only catches up; its time is not a first index's)."""
    root = folder / "vault"
    reused = reuse and root.is_dir() and (folder / ".engram").is_dir()
    if reused:  # files a previous run edited are restamped by the catch-up index below
        paths = sorted(root.rglob("*.md"))
    else:
        fresh_folder(folder)
        paths = vault.write_vault(root, files)
        vault.age(paths, 3600)
    (folder / "engram.toml").write_text(
        f'[embedder]\nprovider = "{embedder}"\n[store]\nbackend = "sqlite"\n'
        '[vault]\npaths = ["vault"]\nrespect_gitignore = false\n',
        encoding="utf-8",
    )
    config = EngramConfig(
        root=folder,
        store={"backend": "sqlite"},
        embedder={"provider": embedder},
        vault={"paths": [root], "respect_gitignore": False},
    )
    with Memory.open(config) as memory:
        began = time.perf_counter()
        memory.index([root])
        first_s = time.perf_counter() - began
        row = {
            "files": files,
            "chunks": memory.store.count(),
            "first_index_s": None if reused else first_s,
            "noop": noop(memory, root),
            "edit": one_file_edit(memory, root, paths),
        }
    row["cli"] = cold_cli(folder)
    return row


def render(rows: list[dict[str, Any]], info: dict[str, Any]) -> str:
    """The results file: every figure beside its floor of the same run."""
    lines = [
        f"# Re-index against its floor ({info['date']}, {info['slug']})",
        "",
        f"Machine: {info['cpu']}, {info['cores']} cores usable; load average at start "
        f"{info['load_start']}, at end {info['load_end']}. Revision {info['revision']}. "
        f"Store: SQLite; embedder: {info['embedder']}. Generated vault (bench/vault.py), files "
        "dated an hour back (as notes written before the session).",
        "",
        "Floor = `os.walk` + one `os.stat` a file of the same vault, in the same process, taken "
        f"in turn with the measured call ({RUNS} pairs; medians; ratio = median of the pairs' "
        f"ratios). Target: no-op ≤ {TARGET}x the floor; a one-file edit ≤ {TARGET}x the floor "
        "+ the embedding of that file's chunks (timed alone, uncached; median of "
        f"{EDITS} edits).",
        "",
        "| files | floor wall / CPU | no-op `Memory.index()` wall / CPU | ratio wall / CPU "
        "| 1-file edit wall (budget) | cold CLI `engram index` (bare `python -c pass`) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        n, e, c = r["noop"], r["edit"], r["cli"]
        ok = "within" if n["ratio_wall"] <= TARGET else "over"
        edit_ok = "within" if e["call_wall_s"] <= e["budget_s"] else "over"
        lines.append(
            f"| {r['files']:,} | {_ms(n['floor_wall_s'])} / {_ms(n['floor_cpu_s'])} "
            f"| {_ms(n['call_wall_s'])} / {_ms(n['call_cpu_s'])} "
            f"| {n['ratio_wall']:.2f}x / {n['ratio_cpu']:.2f}x ({ok} {TARGET}x) "
            f"| {_ms(e['call_wall_s'])} ({edit_ok} {_ms(e['budget_s'])} = {TARGET}x "
            f"{_ms(e['floor_wall_s'])} + {_ms(e['embedding_s'])} embedding) "
            f"| {_ms(c['engram_index_s'])} ({_ms(c['python_pass_s'])}) |"
        )
    lines += [
        "",
        "First index (for scale): "
        + "; ".join(
            f"{r['files']:,} files, {r['chunks']:,} chunks"
            + (f" in {r['first_index_s']:.1f} s" if r["first_index_s"] else " (store reused)")
            for r in rows
        )
        + ".",
    ]
    return "\n".join(lines) + "\n"


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--files", type=int, action="append", help="vault sizes (repeatable)")
    parser.add_argument("--embedder", default="hash")
    parser.add_argument("--work", type=Path, default=Path(".bench-reindex"))
    parser.add_argument("--out", type=Path, default=Path("bench/results"))
    parser.add_argument("--reuse", action="store_true", help="keep a vault and index from --work")
    args = parser.parse_args(argv)
    cpu = machine.machine_info()
    info = {
        "date": machine.today(),
        "slug": machine.machine_slug(cpu),
        "cpu": cpu.get("cpu"),
        "cores": cpu.get("cores"),
        "load_start": machine.load_average(),
        "revision": machine.source_revision(),
        "embedder": args.embedder,
    }
    rows = []
    for files in args.files or [1000, 10000]:
        print(f"reindex: {files} files", file=sys.stderr)
        rows.append(measure(files, args.work / f"vault-{files}", args.embedder, args.reuse))
        print(rows[-1], file=sys.stderr)
    info["load_end"] = machine.load_average()
    args.out.mkdir(parents=True, exist_ok=True)
    target = args.out / f"{info['date']}-{info['slug']}-reindex.md"
    target.write_text(render(rows, info), encoding="utf-8")
    print(target)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
