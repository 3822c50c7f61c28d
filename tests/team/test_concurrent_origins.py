"""Four processes, two per origin, indexing notes and remembering contradicting facts at once
against one real PostgreSQL for 30 seconds: no error, no lost write, no duplicate or orphan
chunk, one live head per chain in each vault, and each origin's rows exactly its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from engram.config import load_config
from engram.memories.files import memory_files, read_info
from engram.memory import Memory
from engram.stores.origins import OriginStore, split_stored
from team_servers import TeamServer

SECONDS = 30
WORKER = r"""
import json, sys, time, traceback
from pathlib import Path
from engram.config import load_config
from engram.memory import Memory

root, tag, seconds, log = Path(sys.argv[1]), sys.argv[2], float(sys.argv[3]), Path(sys.argv[4])
deadline = time.monotonic() + seconds
with log.open("a", encoding="utf-8") as out:
    step = 0
    while time.monotonic() < deadline and step < 400:
        step += 1
        try:
            with Memory.open(load_config(start=root)) as memory:
                note = root / "notes" / f"{tag}-{step}.md"
                note.write_text(f"# {tag} {step}\n\nThe {tag} runbook, step {step}.\n")
                memory.index()
                fact = f"The API listens on port {8000 + step}."
                stored = memory.remember(fact, type="project-config")
            out.write(json.dumps({"note": note.name, "fact": fact, "id": stored.id}) + "\n")
        except Exception:
            out.write(json.dumps({"error": traceback.format_exc()}) + "\n")
        out.flush()
"""


def vault(root: Path, server: TeamServer, name: str) -> Path:
    (root / "notes").mkdir(parents=True)
    (root / "engram.toml").write_text(
        f'[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n[origin]\nname = "{name}"\n'
        + server.store_toml(),
        encoding="utf-8",
    )
    return root


def logged(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def every_wording(root: Path) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in memory_files(root / "memory"))


def test_four_writers_on_two_origins_lose_nothing_and_keep_one_head(
    team_server: Any, tmp_path: Path
) -> None:
    server: TeamServer = team_server("postgres")
    roots = {name: vault(tmp_path / name, server, name) for name in ("alpha", "beta")}
    runs = []
    for name, root in roots.items():
        for n in (1, 2):
            log = tmp_path / f"{name}-{n}.jsonl"
            log.touch()
            args = [sys.executable, "-c", WORKER, str(root), f"{name}{n}", str(SECONDS), str(log)]
            runs.append((name, log, subprocess.Popen(args)))
    for _, _, run in runs:
        assert run.wait(timeout=SECONDS * 20) == 0

    for name, log, _ in runs:
        entries = logged(log)
        errors = [e["error"] for e in entries if "error" in e]
        assert not errors, f"{name}: {errors[0]}"
        assert len(entries) >= 3, f"{name} made only {len(entries)} writes"
        wordings = every_wording(roots[name])
        for entry in entries:
            assert (roots[name] / "notes" / entry["note"]).is_file()
            assert entry["fact"] in wordings, f"{name} lost {entry['fact']!r}"

    for name, root in roots.items():
        with Memory.open(load_config(start=root)) as memory:
            memory.index()
            store = memory.store
            assert isinstance(store, OriginStore)
            documents = store.list_documents()
            notes = {p.name for p in (root / "notes").glob("*.md")}
            indexed = {Path(d).name for d in documents if d.startswith("notes/")}
            assert indexed == notes, f"{name}: notes not indexed {notes - indexed}"
            listed = {str(c) for d in documents.values() for c in list(d.metadata["chunk_ids"])}  # type: ignore[arg-type]
            stored = [c for batch in store.iter_chunks() for c in batch]
            ids = [c.id for c in stored]
            assert len(ids) == len(set(ids)), f"{name}: duplicate chunks"
            assert set(ids) == listed, f"{name}: orphan or missing chunks"
            every = [
                c for batch in store.inner.iter_chunks() for c in batch
            ]  # the whole namespace: the rows of the other origin are that origin's
            mine = [c for c in every if (split_stored(c.id) or ("",))[0] == store.origin.id]
            assert all(c.metadata["origin_name"] == name for c in mine)
            live = [
                info
                for path in memory_files(root / "memory")
                if (info := read_info(path, root)).status == "live"
                and (info.type or "") == "project-config"
            ]
            assert len(live) == 1, f"{name}: {len(live)} live heads: {[i.title for i in live]}"
