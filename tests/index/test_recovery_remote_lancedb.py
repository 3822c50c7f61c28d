"""A LanceDB index on object storage whose tables are damaged in the bucket (data files deleted,
a manifest overwritten with garbage) is not on this machine to move aside: every command says,
in one line, where it is, that it lives on S3, that engram deleted nothing, and that
``engram rebuild`` recreates it (and what that costs); the hooks stay quiet (exit 0, one line)
and the tools answer with the same words. ``engram rebuild`` then makes it whole again. The S3
server is real (moto on loopback), the commands are real subprocesses of ``engram``; an S3 that
is down keeps its own "could not be opened" message."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from hypothesis import given
from hypothesis import strategies as st
from moto.moto_server.werkzeug_app import MotoRequestHandler, create_backend_app
from werkzeug.serving import make_server

from agent_support import capture_finished, wait_until
from engram.config import load_config
from engram.memory import Memory
from engram.tools.toolbox import Toolbox
from engram_lancedb.damage import remote_damage, shown
from support import note, write_vault

ENGRAM = Path(sys.executable).parent / "engram"
BUCKET = "engram-remote-recovery"
PREFIX = "team/index"
SECRET = "s3cr3t-never-printed"
NOTES = 12


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def s3() -> Iterator[str]:
    """moto's S3 application on a free loopback port, with the bucket; its endpoint."""
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    app = create_backend_app("s3")
    server = make_server("127.0.0.1", 0, app, threaded=True, request_handler=MotoRequestHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    port = int(server.server_port)
    wait_until(lambda: listening(port), 30, "moto to listen")
    endpoint = f"http://127.0.0.1:{port}"
    client(endpoint).create_bucket(Bucket=BUCKET)
    yield endpoint
    server.shutdown()
    thread.join()


def client(endpoint: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id="engram-test",
        aws_secret_access_key=SECRET,
        region_name="us-east-1",
    )


def toml(endpoint: str, prefix: str) -> str:
    return (
        '[embedder]\nprovider = "hash"\n[vault]\npaths = ["notes"]\n'
        f'[store]\nbackend = "lancedb"\nuri = "s3://{BUCKET}/{prefix}"\n'
        f'storage_options = {{ aws_endpoint = "{endpoint}", allow_http = true, '
        'aws_region = "us-east-1", client_max_retries = "1", client_retry_timeout = "5" }\n'
    )


def engram(root: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The real CLI; the keys come from the environment, as a user would give them."""
    env = {**os.environ, "AWS_ACCESS_KEY_ID": "engram-test", "AWS_SECRET_ACCESS_KEY": SECRET}
    return subprocess.run(
        [str(ENGRAM), *args],
        cwd=root,
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )


class Bucket:
    """The project's objects in the bucket, read and damaged through the S3 API."""

    def __init__(self, endpoint: str, prefix: str) -> None:
        self.s3 = client(endpoint)
        self.prefix = prefix

    def objects(self) -> dict[str, bytes]:
        s3 = self.s3
        pages = s3.get_paginator("list_objects_v2").paginate(
            Bucket=BUCKET, Prefix=self.prefix + "/"
        )
        keys = [o["Key"] for page in pages for o in page.get("Contents", [])]
        get = s3.get_object
        return {k: get(Bucket=BUCKET, Key=k)["Body"].read() for k in keys}

    def damage(self, how: str) -> None:
        for key in self.objects():
            if how == "chunk data deleted" and "/engram_chunks.lance/data/" in key:
                self.s3.delete_object(Bucket=BUCKET, Key=key)
            if how == "identity manifest garbage" and "/engram_meta.lance/_versions/" in key:
                self.s3.put_object(Bucket=BUCKET, Key=key, Body=b"not a lance manifest " * 40)


_prefixes = iter(range(1_000_000))


@pytest.fixture
def project(tmp_path: Path, s3: str) -> tuple[Path, Bucket]:
    prefix = f"{PREFIX}-{next(_prefixes)}"
    root = write_vault(tmp_path / "p", {f"notes/n{i:02}.md": note(i) for i in range(NOTES)})
    (root / "engram.toml").write_text(toml(s3, prefix), encoding="utf-8")
    remembered = engram(root, "remember", "Deploys go out on Tuesdays after the change review.")
    assert remembered.returncode == 0, remembered.stderr
    indexed = engram(root, "index")
    assert indexed.returncode == 0, indexed.stderr
    return root, Bucket(s3, prefix)


def one_damage_line(run: subprocess.CompletedProcess[str], prefix: str, table: str) -> str:
    """Exit 1, and one line that says where, why it is not rebuilt here, and how."""
    assert run.returncode == 1, (run.stdout, run.stderr)
    lines = [line for line in run.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, run.stderr
    line = lines[0]
    assert f"s3://{BUCKET}/{prefix} (table {table}) is damaged" in line, line
    assert "cannot be rebuilt locally because it lives on S3" in line, line
    assert "deletes nothing there" in line and "`engram rebuild`" in line, line
    assert "embedded again" in line, line
    assert "Traceback" not in run.stderr and SECRET not in run.stderr + run.stdout
    return line


@pytest.mark.parametrize(
    ("how", "table"),
    [("chunk data deleted", "engram_chunks"), ("identity manifest garbage", "engram_meta")],
)
def test_a_damaged_table_on_s3_is_named_left_alone_and_rebuilt_on_request(
    project: tuple[Path, Bucket], how: str, table: str
) -> None:
    root, bucket = project
    bucket.damage(how)
    damaged = bucket.objects()
    # An edited note makes index read the damaged table too.
    (root / "notes" / "n00.md").write_text(
        note(0) + "\nThe zebracorn failover runbook.\n", encoding="utf-8"
    )
    markdown = {p: p.read_bytes() for p in root.rglob("*.md")}

    one_damage_line(engram(root, "search", "postgres replication"), bucket.prefix, table)
    one_damage_line(engram(root, "index"), bucket.prefix, table)
    hook = engram(root, "hooks", "run", "session-start", "--host", "claude-code")
    assert hook.returncode == 0, hook.stderr
    # The hook started a detached capture (catch-up, then the session's): checked once it
    # ended, it too wrote nothing to the store just called damaged.
    capture_finished(root)
    assert "damaged" in (root / ".engram" / "capture.log").read_text(encoding="utf-8")
    if table == "engram_chunks":
        # The session-start block lists memories without reading a chunk: it still comes.
        assert "Tuesdays" in hook.stdout and hook.stderr.strip() == "", hook.stderr
    else:
        assert hook.stdout == "", "stdout stays clean for the host"
        [warning] = hook.stderr.splitlines()
        assert warning.startswith("engram: memory unavailable: the index at s3://"), warning
        assert "is damaged" in warning and "`engram rebuild`" in warning, warning
    assert bucket.objects() == damaged, "nothing in the bucket was moved, dropped or rewritten"
    assert {p: p.read_bytes() for p in root.rglob("*.md")} == markdown

    rebuilt = engram(root, "rebuild")
    assert rebuilt.returncode == 0, rebuilt.stderr
    assert f"{NOTES + 1} new" in rebuilt.stdout, rebuilt.stdout
    found = engram(root, "search", "zebracorn failover", "--json")
    assert found.returncode == 0 and found.stderr.strip() == "", found.stderr
    assert "notes/n00.md" in found.stdout and "zebracorn" in found.stdout, found.stdout
    hook = engram(root, "hooks", "run", "session-start", "--host", "claude-code")
    assert hook.returncode == 0 and "Tuesdays" in hook.stdout, hook.stderr


def test_the_tools_answer_with_the_same_words(
    project: tuple[Path, Bucket], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, bucket = project
    bucket.damage("chunk data deleted")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "engram-test")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with Memory.open(load_config(start=root)) as memory:
        result = Toolbox(memory).call("memory_search", {"query": "postgres replication"})
    assert not result.ok
    assert f"s3://{BUCKET}/{bucket.prefix} (table engram_chunks) is damaged" in result.text
    assert "`engram rebuild`" in result.text and SECRET not in result.text


def test_s3_that_is_down_is_unreachable_not_damaged(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    root = write_vault(tmp_path / "p", {"notes/a.md": note(0)})
    (root / "engram.toml").write_text(toml(f"http://127.0.0.1:{port}", "down"), encoding="utf-8")
    run = engram(root, "search", "postgres")
    assert run.returncode == 1 and "Traceback" not in run.stderr, run.stderr
    assert "could not be opened" in run.stderr and "object store is reachable" in run.stderr
    assert "damaged" not in run.stderr and SECRET not in run.stderr


KEYS = st.text(alphabet="0123456789ABCDEFabcdef", min_size=12, max_size=40).map("sk-{}".format)


@given(user=KEYS, secret=KEYS, table=st.sampled_from(["engram_chunks", "engram_meta"]))
def test_a_damage_message_never_shows_keys_written_into_the_uri(
    user: str, secret: str, table: str
) -> None:
    uri = f"s3://{user}:{secret}@my-bucket/team/index?session_token={secret}"
    cause = f"Not found: team/index/{table}.lance/data/0101.lance"
    line = str(remote_damage(shown(uri), "search vectors", cause, lambda: None))
    assert user not in line and secret not in line, line
    assert f"the index at s3://my-bucket/team/index (table {table}) is damaged" in line
    assert "lives on S3 (bucket my-bucket)" in line
