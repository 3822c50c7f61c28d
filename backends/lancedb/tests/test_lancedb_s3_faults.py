"""Object storage that is down, or goes away in the middle of indexing: a clear ``StoreError``
(never a Rust or botocore traceback), and a re-run that finishes the job with nothing lost and
nothing duplicated. The S3 server is real (moto on loopback); the outage is a TCP relay in front
of it that drops every connection."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engram import Memory, StoreError, load_config
from engram.testing.host import run_cli
from engram_lancedb import LanceDBOptions
from engram_lancedb.store import LanceDBStore

NOTES = 12


def write_notes(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(NOTES):
        parts = (f"## Part {p}\n\nNote {i} part {p} about topic{i % 5}." for p in range(3))
        body = "\n\n".join(parts)
        (folder / f"n{i:02}.md").write_text(f"# Note {i}\n\n{body}\n", encoding="utf-8")


def project_config(uri: str, storage: dict[str, str]) -> dict[str, Any]:
    return {
        "store": {"backend": "lancedb", "uri": uri, "storage_options": storage},
        "embedder": {"provider": "hash"},
        "vault": {"paths": ["notes"]},
    }


def snapshot(memory: Memory) -> tuple[list[str], dict[str, str]]:
    ids = sorted(c.id for batch in memory.store.iter_chunks() for c in batch)
    docs = {k: d.hash for k, d in memory.store.list_documents().items()}
    return ids, docs


def test_object_storage_that_is_down_is_a_clear_error(s3_server: Any, relay: Any) -> None:
    relay.cut()
    options = LanceDBOptions(
        uri=s3_server.uri("down"), storage_options=s3_server.options(relay.endpoint)
    )
    with pytest.raises(StoreError) as err:
        LanceDBStore(options)
    message = str(err.value)
    assert message.startswith(f"the LanceDB store at {options.uri} could not be opened")
    assert "object store is reachable" in message and "run the command again" in message
    assert "Traceback" not in message and "testing" not in message, "no secrets, no traces"


def test_a_store_that_loses_its_object_storage_mid_index_recovers_on_rerun(
    tmp_path: Path, s3_server: Any, relay: Any
) -> None:
    write_notes(tmp_path / "notes")
    # What a run that is never interrupted produces (ids and hashes do not depend on where).
    clean = {**project_config("", {}), "store": {"backend": "lancedb", "path": "clean"}}
    with Memory.open(load_config(clean, start=tmp_path)) as memory:
        memory.index()
        expected = snapshot(memory)
    assert len(expected[1]) == NOTES

    config = project_config(s3_server.uri("outage"), s3_server.options(relay.endpoint))
    with Memory.open(load_config(config, start=tmp_path)) as memory:
        relay.cut_after_writes(25)
        with pytest.raises(StoreError) as err:
            memory.index()
    assert "could not" in str(err.value) and "run the command again" in str(err.value)

    relay.restore()
    with Memory.open(load_config(config, start=tmp_path)) as memory:
        partial = snapshot(memory)
        assert 0 < len(partial[1]) < NOTES, "the outage hit in the middle of the run"
        report = memory.index()
        assert report.new + report.changed == NOTES - len([d for d, h in partial[1].items() if h])
        ids, docs = snapshot(memory)
        assert ids == expected[0], "every chunk is there exactly once"
        assert len(ids) == len(set(ids)) == memory.store.count()
        assert docs == expected[1]
        again = memory.index()
        assert (again.new, again.changed, again.unchanged) == (0, 0, NOTES)


def test_the_cli_reports_an_outage_in_one_line(
    tmp_path: Path,
    s3_server: Any,
    relay: Any,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    write_notes(tmp_path / "notes")
    uri = s3_server.uri("cli")
    storage = s3_server.options(relay.endpoint)
    lines = [
        "[store]",
        'backend = "lancedb"',
        f'uri = "{uri}"',
        "[store.storage_options]",
        *(f'{k} = "{v}"' for k, v in storage.items()),
        "[embedder]",
        'provider = "hash"',
        "[vault]",
        'paths = ["notes"]',
    ]
    (tmp_path / "engram.toml").write_text("\n".join(lines) + "\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    relay.cut()
    assert run_cli(["index"]) == 1
    err = capsys.readouterr().err
    assert f"the LanceDB store at {uri} could not be opened" in err
    assert "Traceback" not in err
    relay.restore()
    assert run_cli(["index"]) == 0
    assert f"{NOTES} new" in capsys.readouterr().out
