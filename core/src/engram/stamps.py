"""Document stamps: what a re-index needs of each record to leave an unchanged file unread.

A record's stamp is the file's (size, mtime_ns, inode) when it was indexed, when the record
can vouch for it: it kept a content hash (it is complete) and the file's mtime was at least
``settled_s`` older than its indexing (a file written within the file system's timestamp
granularity of its indexing could change again unseen). A file that still has its record's
stamp is unchanged, without being read. Otherwise the stamp is None and the file is read.

A store that offers ``ReadsStamps`` (``engram.protocols``) reads the stamps of some sources'
records under some roots in one bulk query, without building a ``Document`` per record; core
derives them from ``list_documents`` otherwise (``engram.ingest.records``), with the same values
either way (``StoreSuite`` checks both agree). The bulk form is one flat tuple a record
(``Stamp``): a re-index compares it with one tuple built from the file's stat, label and id, so
neither side builds a tuple a record or looks a label up.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engram.models import Document

Stat = tuple[int, int, int]  # (size, mtime_ns, inode)
# (size, mtime_ns, inode, source, document id); size is None when the record cannot vouch
# for its stat (``stamp_of`` is None), so no file's stat equals it; mtime_ns and inode are the
# record's (``stat_from``), None when it kept no valid stat.
Stamp = tuple[int | None, int | None, int | None, str, str]


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
    _, mtime_ns, inode = stat or (None, None, None)
    size = stat[0] if stat is not None and stamp_of(document, settled_s) is not None else None
    return (size, mtime_ns, inode, str(document.metadata.get("source")), document.id)


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
    """A stored ``[size, mtime_ns, inode]`` as a tuple, or None when it is not three integers."""
    if isinstance(value, list | tuple) and len(value) == 3 and all(_is_int(v) for v in value):
        return (value[0], value[1], value[2])
    return None


def text_of(value: Any) -> str | None:
    """A metadata value when it is text (None otherwise)."""
    return value if isinstance(value, str) else None


def number_of(value: Any) -> float | None:
    """A metadata value when it is a number, not a bool (None otherwise)."""
    return float(value) if type(value) in (int, float) else None


def _is_int(value: Any) -> bool:
    return type(value) is int  # bool is not a size or an inode
