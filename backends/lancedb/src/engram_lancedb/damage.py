"""Telling a damaged table on object storage from object storage that is down.

A read that fails while the same bucket still answers a listing failed on the data itself (a
manifest or data file deleted or overwritten, the identity table unreadable): that is a
``RemoteIndexDamaged``, which names the URI and the table and says ``engram rebuild`` recreates
it there. A listing that fails too means the store is unreachable (network, endpoint,
credentials), which keeps its own message. Nothing here deletes anything: ``clear`` is only
called by an explicit rebuild or reset.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

from engram import RemoteIndexDamaged
from engram_lancedb.records import CHUNKS, DOCUMENTS, META

TABLES = (CHUNKS, DOCUMENTS, META)
_TABLE = re.compile("|".join(re.escape(name) for name in TABLES))
_SERVICES = {
    "s3": "S3",
    "s3+ddb": "S3",
    "gs": "Google Cloud Storage",
    "az": "Azure Blob Storage",
    "abfs": "Azure Blob Storage",
    "abfss": "Azure Blob Storage",
}


def shown(target: str) -> str:
    """A URI as messages show it: without user, password or query (which may carry keys)."""
    parts = urlsplit(target)
    if not parts.scheme or "://" not in target:
        return target  # a folder
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return f"{parts.scheme}://{host}{parts.path}"


def lives_on(uri: str) -> str:
    """The object store in words: ``S3 (bucket my-bucket)``; never credentials."""
    parts = urlsplit(uri)
    service = _SERVICES.get(parts.scheme, "object storage")
    return f"{service} (bucket {parts.hostname or parts.netloc})"


_BY_ACTION = (("document", DOCUMENTS), ("identity", META), ("chunk", CHUNKS), ("search", CHUNKS))


def where(uri: str, action: str, cause: str) -> str:
    """The URI, and the table: named in the failure, or the one the action reads."""
    found = _TABLE.search(cause) or _TABLE.search(action)
    table = found.group(0) if found else next((t for w, t in _BY_ACTION if w in action), None)
    return f"{uri} (table {table})" if table else uri


def remote_damage(
    uri: str, action: str, cause: str, clear: Callable[[], None]
) -> RemoteIndexDamaged:
    return RemoteIndexDamaged(
        where=where(uri, action, cause),
        lives_on=lives_on(uri),
        detail=f"it could not {action}: {cause}",
        clear=clear,
    )
