"""The document records of one index run: every record's stamp in one read, the full records
of the few documents that changed or went.

A store that offers ``ReadsStamps`` answers both directly (SQLite: one query a side, every
source at once); any other store has ``list_documents`` read once, and both are derived from it.
"""

from __future__ import annotations

from collections.abc import Sequence

from engram.models import Document
from engram.protocols import ReadsStamps, Store
from engram.stamps import Stamp, bulk_stamp, selected


class Records:
    """A store's records for one run: ``stamps()`` first, then ``documents(ids)`` as needed."""

    def __init__(self, store: Store) -> None:
        self._store = store
        self._all: dict[str, Document] | None = None

    def stamps(
        self, sources: Sequence[str], roots: Sequence[str], settled_s: float
    ) -> dict[str, Stamp]:
        """The stamps of the records of ``sources`` under ``roots`` (see ``ReadsStamps``)."""
        if isinstance(self._store, ReadsStamps):
            return self._store.document_stamps(sources, roots, settled_s)
        return {
            doc_id: bulk_stamp(doc, settled_s)
            for doc_id, doc in self._everything().items()
            if selected(doc, sources, roots)
        }

    def documents(self, ids: Sequence[str]) -> dict[str, Document]:
        """The full records of ``ids`` (unknown ids left out)."""
        if not ids:
            return {}
        if self._all is None and isinstance(self._store, ReadsStamps):
            return self._store.get_documents(ids)
        everything = self._everything()
        return {i: everything[i] for i in ids if i in everything}

    def _everything(self) -> dict[str, Document]:
        if self._all is None:
            self._all = self._store.list_documents()
        return self._all
