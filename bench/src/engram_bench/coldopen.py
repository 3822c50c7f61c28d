"""Child process of the speed run: how long a fresh process takes to open a store and answer.

Run as ``python -m engram_bench.coldopen JOB.json``; writes the timings to the job's ``result``.
Imports are timed separately from opening, so slow plugin imports are visible as such.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def main(job_file: str) -> None:
    job = json.loads(Path(job_file).read_text())
    began = time.perf_counter()
    from engram.plugins import build_registry, get_plugin_manager
    from engram_bench.stores import select_stores

    registry = build_registry(get_plugin_manager())
    specs, skipped = select_stores(registry, [job["store"]], {job["store"]: job["options"]})
    if skipped:
        raise SystemExit(f"cannot build {job['store']}: {skipped[job['store']]}")
    imported = time.perf_counter()
    store = specs[0].build(Path(job["folder"]))
    count = store.count()
    opened = time.perf_counter()
    store.vector_search(job["vector"], job["k"])
    answered = time.perf_counter()
    store.close()
    Path(job["result"]).write_text(
        json.dumps(
            {
                "import_ms": (imported - began) * 1000.0,
                "open_ms": (opened - imported) * 1000.0,
                "first_query_ms": (answered - opened) * 1000.0,
                "open_and_first_query_ms": (answered - imported) * 1000.0,
                "count": count,
            }
        )
    )


if __name__ == "__main__":
    main(sys.argv[1])
