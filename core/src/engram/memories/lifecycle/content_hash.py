"""The same fact written twice, found without an embedder: a hash of the normalised text.

Normalising casefolds, applies NFKC, collapses whitespace and strips trailing punctuation, so
"Releases are tagged from main." and "releases are  tagged from main" are one fact. The hash is
written to the frontmatter as ``content_hash`` (and so reaches every chunk's metadata), but a
lookup recomputes it from each file's body: a person may have edited the text by hand, and the
file is the truth. The lookup reads the memory folder itself, not the index, so it works while
the embedder or the index is down or behind (it runs under the folder's write lock).

Parsing every memory's frontmatter on every write made a write cost O(memories) YAML parses
(0.43 s of a 0.49 s ``remember`` at 500 memories), so what each file says (live memory of which
type, the hash of its wording) is kept in a derived cache in the folder's ``.engram/``, keyed by
the file's (size, mtime_ns, inode, ctime_ns) (the ctime: an edit whose mtime was put back by
``touch -r`` or ``cp -p`` must not keep the old hash; see ``engram.stamps``): a file whose stat
changed, or changed too recently to trust its stat (``STABLE_S``), is read again; a cache that
cannot be read is rebuilt.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
import unicodedata
from pathlib import Path
from typing import Any

from engram.chunking import read_frontmatter
from engram.dbfiles.folder import ENGRAM_DIR
from engram.memories.files import MEMORY_ID, memory_files, status_of, wording_of
from engram.text.redact import strip_private

HASH_KEY = "content_hash"
_TRAILING = ".!?;:,…。 \t\r\n"  # NFKC already made fullwidth marks ASCII
CACHE_NAME = "content-hashes.json"
STABLE_S = 2.0  # a file changed this recently may change again within its mtime's granularity
_VERSION = 2  # 2: the ctime in each file's stamp (a cache of 1 is read as empty)


def normalise(text: str) -> str:
    """The text as compared for exact duplicates."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).rstrip(_TRAILING)


def content_hash(text: str) -> str:
    """``sha256:`` and the hex digest of the normalised text."""
    return "sha256:" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def same_text(folder: Path, type: str, digest: str) -> Path | None:
    """The live memory of ``type`` in ``folder`` whose body hashes to ``digest`` (the first
    such file in listing order when several do), or None."""
    cache = _load(folder)
    kept: dict[str, Any] = {}
    found: Path | None = None
    now = time.time()
    for path in memory_files(folder):
        try:
            st = path.stat()
        except OSError:
            continue
        key, stamp = str(path), [st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns]
        entry = cache.get(key)
        if not (isinstance(entry, list) and len(entry) == 2 and entry[0] == stamp):
            facts = _facts(path)
            if facts is False:
                continue  # unreadable now: not a candidate, not remembered
            entry = [stamp, facts]
        if st.st_mtime_ns / 1e9 + STABLE_S <= now:
            kept[key] = entry
        if found is None and entry[1] == [type, digest]:
            found = path
    if kept != cache:
        _save(folder, kept)
    return found


def _facts(path: Path) -> list[str] | bool | None:
    """[type, hash of the wording] of a live engram memory, None for any other file, False when
    it cannot be read."""
    try:
        fm = read_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return False
    meta = fm.metadata
    memory_id, kind = meta.get("id"), meta.get("type")
    if not (isinstance(memory_id, str) and MEMORY_ID.match(memory_id)):
        return None  # a hand-written note: never merged into
    if not isinstance(kind, str) or status_of(meta) != "live":
        return None
    return [kind, content_hash(strip_private(wording_of(meta, fm.body)))]


def _cache_path(folder: Path) -> Path:
    return folder / ENGRAM_DIR / CACHE_NAME


def _load(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads(_cache_path(folder).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(data, dict) or data.get("version") != _VERSION:
        return {}
    files = data.get("files")
    return files if isinstance(files, dict) else {}


def _save(folder: Path, files: dict[str, Any]) -> None:
    """Replace the cache atomically (only a shortcut: a failure leaves the next write slower)."""
    path = _cache_path(folder)
    temp = path.with_name(f"{CACHE_NAME}.{os.getpid()}")
    with contextlib.suppress(OSError):
        temp.write_text(json.dumps({"version": _VERSION, "files": files}), encoding="utf-8")
        os.replace(temp, path)
