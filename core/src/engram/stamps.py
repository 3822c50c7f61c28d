"""Document stamps: what a re-index needs of each record to leave an unchanged file unread.

A record's stamp is the file's (size, mtime_ns, inode, ctime_ns) when it was indexed, when the
record can vouch for it: it kept a content hash (it is complete) and the file's mtime was at least
``settled_s`` older than its indexing (a file written within the file system's timestamp
granularity of its indexing could change again unseen). A file that still has its record's
stamp is unchanged, without being read. Otherwise the stamp is None and the file is read.

The ctime is there because the mtime can be put back: ``touch -r``, ``cp -p`` onto the same
inode and some sync tools edit a file and restore its mtime, and a same-size edit then kept
(size, mtime_ns, inode) and was never indexed again. ``utime`` cannot set the ctime (the
kernel sets it to now on every change of the file, its times included), which is why git's
index keeps it too. A record written before the ctime was kept has a three-number stat: it is
not valid, so that file is read (hashed) once and its record restamped, never trusted unseen.
The settling test stays on the mtime: tests and the bench age files with ``utime``.

A store that offers ``ReadsStamps`` (``engram.protocols``) reads the stamps of some sources'
records under some roots in one bulk query, without building a ``Document`` per record; core
derives them from ``list_documents`` otherwise (``engram.ingest.records``), with the same values
either way (``StoreSuite`` checks both agree). The bulk form is one flat tuple a record
(``Stamp``): a re-index compares it with one tuple built from the file's stat, label and id, so
neither side builds a tuple a record or looks a label up.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from engram.models import Document

Stat = tuple[int, int, int, int]  # (size, mtime_ns, inode, ctime_ns)
# (size, mtime_ns, inode, ctime_ns, source, document id); size is None when the record cannot
# vouch for its stat (``stamp_of`` is None), so no file's stat equals it; mtime_ns, inode and
# ctime_ns are the record's (``stat_from``), None when it kept no valid stat.
Stamp = tuple[int | None, int | None, int | None, int | None, str, str]


def stamp_of(document: Document, settled_s: float) -> Stat | None:
    """The stamp of a full record: the reference every store's bulk read must agree with."""
    meta = document.metadata
    stat = stat_from(meta.get("stat"))
    indexed_at = number_of(meta.get("indexed_at"))
    if not document.hash or stat is None or indexed_at is None:
        return None
    return stat if stat[1] / 1e9 + settled_s <= indexed_at else None


def bulk_stamp(document: Document, settled_s: float) -> Stamp:
    """A record's ``Stamp``, as the bulk read gives it (its ``source`` must be text)."""
    stat = stat_from(document.metadata.get("stat"))
    _, mtime_ns, inode, ctime_ns = stat or (None, None, None, None)
    size = stat[0] if stat is not None and stamp_of(document, settled_s) is not None else None
    return (size, mtime_ns, inode, ctime_ns, str(document.metadata.get("source")), document.id)


def selected(document: Document, sources: Sequence[str], roots: Sequence[str]) -> bool:
    """The record is of one of ``sources`` and its ``path`` is one of ``roots`` or lies under one
    (posix text without a trailing "/"; "" stands for the file system's root)."""
    meta = document.metadata
    path = meta.get("path")
    source = meta.get("source")
    if not isinstance(source, str) or source not in sources or not isinstance(path, str):
        return False
    return any(path == root or path.startswith(root + "/") for root in roots)


def stat_from(value: Any) -> Stat | None:
    """A stored ``[size, mtime_ns, inode, ctime_ns]`` as a tuple, or None when it is not four
    integers (a record of an engram that kept no ctime: its file is hashed once)."""
    if isinstance(value, list | tuple) and len(value) == 4 and all(_is_int(v) for v in value):
        return (value[0], value[1], value[2], value[3])
    return None


def stat_of(st: os.stat_result) -> Stat:
    """A file's ``Stat`` from its ``os.stat``."""
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_ctime_ns)


def text_of(value: Any) -> str | None:
    """A metadata value when it is text (None otherwise)."""
    return value if isinstance(value, str) else None


def number_of(value: Any) -> float | None:
    """A metadata value when it is a number, not a bool (None otherwise)."""
    return float(value) if type(value) in (int, float) else None


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is not a size or an inode
