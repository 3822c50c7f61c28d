"""The same fact written twice, found without an embedder: a hash of the normalised text.

Normalising casefolds, applies NFKC, collapses whitespace and strips trailing punctuation, so
"Releases are tagged from main." and "releases are  tagged from main" are one fact. The hash is
written to the frontmatter as ``content_hash`` (and so reaches every chunk's metadata), but a
lookup recomputes it from each file's body: a person may have edited the text by hand, and the
file is the truth. The lookup reads the memory folder itself, not the index, so it works while
the embedder or the index is down or behind (it runs under the folder's write lock).
"""

from __future__ import annotations

import hashlib
import unicodedata
from pathlib import Path

from engram.chunking import read_frontmatter
from engram.memory_files import MEMORY_ID, memory_files, status_of, wording_of
from engram.redact import strip_private

HASH_KEY = "content_hash"
_TRAILING = ".!?;:,…。 \t\r\n"  # NFKC already made fullwidth marks ASCII


def normalise(text: str) -> str:
    """The text as compared for exact duplicates."""
    folded = unicodedata.normalize("NFKC", text).casefold()
    return " ".join(folded.split()).rstrip(_TRAILING)


def content_hash(text: str) -> str:
    """``sha256:`` and the hex digest of the normalised text."""
    return "sha256:" + hashlib.sha256(normalise(text).encode("utf-8")).hexdigest()


def same_text(folder: Path, type: str, digest: str) -> Path | None:
    """The live memory of ``type`` in ``folder`` whose body hashes to ``digest`` (the oldest
    such file when several do), or None."""
    for path in memory_files(folder):
        try:
            fm = read_frontmatter(path.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            continue
        meta = fm.metadata
        memory_id = meta.get("id")
        if not (isinstance(memory_id, str) and MEMORY_ID.match(memory_id)):
            continue  # a hand-written note: never merged into
        if meta.get("type") != type or status_of(meta) != "live":
            continue
        if content_hash(strip_private(wording_of(meta, fm.body))) == digest:
            return path
    return None
