"""Origins: many machines on one server store, none able to erase another's documents.

A vault's **origin** is a stable id kept in its ``.engram/origin.json`` (made on first use),
with a readable name (``[origin] name``, by default ``<host>:<project folder>``). A store whose
data many machines write (``SharedStore.shared``: PostgreSQL, a Chroma server, LanceDB on
object storage) is opened through ``OriginStore``, which gives the rest of engram a view of it
in which:

- this vault's rows are stored under ids prefixed with its origin id (two machines' notes with
  the same path are two documents), and carry ``origin`` / ``origin_name`` metadata;
- every write, delete and ``reset`` reaches only this origin's rows, and ``list_documents`` /
  ``iter_chunks`` / ``count`` list only them, so ``index``, ``rebuild``, ``prune``, ``forget``
  and ``reset`` change only this vault's documents, ever, whatever they are asked;
- search spans every origin: a hit of another origin keeps its stored id
  (``<origin id>:<path>``) and metadata, and its record keeps the file's text (``text``, private
  spans removed), so ``engram get`` and ``export --origin`` read it from the server.

Core code above the store never sees the prefixes of its own rows: own ids come back as they
went in. Nothing here is SQL or a where-clause: origins are filter values (``engram.filters``),
which every store binds as data.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import socket
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from engram.closing import ClosingStore
from engram.errors import ConfigError, MemoryNotFound, StoreError
from engram.filters import And, Eq, Filter
from engram.models import Chunk, Document, Hit, IndexIdentity
from engram.protocols import (
    Diagnoses,
    KeywordCeiling,
    Optimizes,
    PrunesDocuments,
    ReplacesDocuments,
    SharedStore,
    Store,
    StoreCapability,
)

ORIGIN_FILE = ".engram/origin.json"
ORIGIN_KEY = "origin"  # chunk and record metadata: the origin id
ORIGIN_NAME_KEY = "origin_name"  # … and its readable name
TEXT_KEY = "text"  # a record's file text (private spans removed), for reading without the file
_ID = re.compile(r"^[0-9a-f]{16}$")
_STORED = re.compile(r"^([0-9a-f]{16}):(.+)$", re.DOTALL)
NAME_MAX = 120


@dataclass(frozen=True)
class Origin:
    """Who wrote a row: a vault's stable id and its readable name."""

    id: str
    name: str

    def stored(self, own_id: str) -> str:
        """The id a row of this origin has in the shared store."""
        return f"{self.id}:{own_id}"


def split_stored(stored_id: str) -> tuple[str, str] | None:
    """``(origin id, own id)`` of an id as a shared store keeps it; None for any other id."""
    found = _STORED.match(stored_id)
    return (found.group(1), found.group(2)) if found else None


def check_name(name: str) -> str:
    """A readable origin name: one line of printable text, at most ``NAME_MAX`` characters."""
    cleaned = name.strip()
    if not cleaned or len(cleaned) > NAME_MAX or not cleaned.isprintable():
        raise ConfigError(
            f"origin name {name!r} is not usable: give one line of printable text of at most "
            f"{NAME_MAX} characters ([origin] name)"
        )
    return cleaned


def default_name(root: Path) -> str:
    """``<host>:<project folder>``: what a teammate recognises in ``engram stats``."""
    host = socket.gethostname() or "host"
    return check_name(f"{host}:{root.resolve().name or 'root'}"[:NAME_MAX])


def load_origin(root: Path, name: str | None = None) -> Origin:
    """The vault's origin, made on first use (``.engram/origin.json`` under ``root``). Two
    processes making it at once agree: the file is created exclusively, and the loser reads the
    winner's. ``name`` (``[origin] name``) overrides the readable name, never the id."""
    path = root / ORIGIN_FILE
    found = _read(path)
    if found is None:
        made = {"id": uuid.uuid4().hex[:16], "name": default_name(root)}
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(made) + "\n", encoding="utf-8")
        try:
            os.link(tmp, path)  # exclusive: fails when another process made it first
        except FileExistsError:
            pass
        finally:
            with contextlib.suppress(OSError):
                tmp.unlink()
        found = _read(path)
        if found is None:
            raise ConfigError(f"{path} could not be written or read back; check its folder")
    origin_id, stored_name = found
    return Origin(origin_id, check_name(name) if name else stored_name)


def _read(path: Path) -> tuple[str, str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ConfigError(
            f"{path} is unreadable ({exc}); it names this vault's origin on a shared store: "
            "restore it from a backup, or delete it to start a new origin (the rows of the old "
            "one then stay on the server, readable by everyone)"
        ) from None
    origin_id = data.get("id") if isinstance(data, dict) else None
    name = data.get("name") if isinstance(data, dict) else None
    if not isinstance(origin_id, str) or not _ID.match(origin_id):
        raise ConfigError(
            f"{path} holds no valid origin id (16 hex digits); delete it to start anew"
        )
    return origin_id, check_name(name) if isinstance(name, str) and name.strip() else origin_id


def refuse_foreign(store: Store, id_or_path: str) -> None:
    """``MemoryNotFound`` for another origin's memory: only its own machine changes it."""
    if isinstance(store, OriginStore) and store.foreign(id_or_path):
        owner = store.origins().get(id_or_path.split(":", 1)[0], "another machine")
        raise MemoryNotFound(
            f"{id_or_path} is {owner}'s, on the shared store: only that machine changes or "
            "forgets it (`engram get` reads it)"
        )


def shared(store: Store) -> bool:
    """Whether ``store``'s data is written by many machines."""
    return isinstance(store, SharedStore) and bool(store.shared)


def open_view(store: Store, origin: Origin) -> Store:
    """``store`` as this origin sees it: itself when it is not shared, an ``OriginStore``
    (with the optional capabilities the store has) when it is."""
    if not shared(store) or isinstance(store, OriginStore):
        return store
    if "filter" not in store.capabilities:
        raise StoreError(
            f"{type(store).__name__} says it is shared but cannot filter by metadata; engram "
            "keeps machines apart on a shared store by filtering on their origin"
        )
    extras: list[type] = []
    if isinstance(store, PrunesDocuments):
        extras.append(_Prunes)
    if isinstance(store, ReplacesDocuments):
        extras.append(_Replaces)
    if isinstance(store, Optimizes):
        extras.append(_Optimizes)
    view: OriginStore = _view_class(tuple(extras), store.capabilities)(store, origin)
    return view


@functools.cache
def _view_class(
    extras: tuple[type, ...], capabilities: frozenset[StoreCapability]
) -> type[OriginStore]:
    """One class per set of capabilities (made once: type caches key on it). What the view can
    do is what the store can do (persistence, concurrent writers…)."""
    return type("OriginStore", (*extras, OriginStore), {"capabilities": capabilities})


class OriginStore(ClosingStore):
    """One origin's view of a shared store (see the module docstring)."""

    capabilities: ClassVar[frozenset[StoreCapability]] = frozenset(
        {"vector", "keyword", "filter", "persistent"}
    )
    shared = True

    def __init__(self, inner: Store, origin: Origin) -> None:
        self.inner = inner
        self.origin = origin
        self._mine = Eq(field=ORIGIN_KEY, value=origin.id)

    # -- ids ----------------------------------------------------------------------------------
    def stored(self, some_id: str) -> str:
        """The store's id for an id as this view gives it (another origin's stay as they are)."""
        return some_id if self.foreign(some_id) else self.origin.stored(some_id)

    def foreign(self, some_id: str) -> bool:
        """Whether an id as this view gives it is another origin's."""
        parts = split_stored(some_id)
        return parts is not None and parts[0] != self.origin.id

    def _shown(self, stored_id: str) -> str:
        parts = split_stored(stored_id)
        return parts[1] if parts is not None and parts[0] == self.origin.id else stored_id

    def _own(self, stored_id: str) -> bool:
        parts = split_stored(stored_id)
        return parts is not None and parts[0] == self.origin.id

    def _stamp(self, metadata: dict[str, Any]) -> dict[str, Any]:
        return {**metadata, ORIGIN_KEY: self.origin.id, ORIGIN_NAME_KEY: self.origin.name}

    def _to_store(self, chunk: Chunk) -> Chunk:
        return chunk.model_copy(
            update={
                "id": self.origin.stored(chunk.id),
                "document_id": self.origin.stored(chunk.document_id),
                "metadata": self._stamp(chunk.metadata),
            }
        )

    def _from_store(self, chunk: Chunk) -> Chunk:
        """A chunk as this view gives it: this origin's exactly as it went in (ids and
        metadata), another's under its stored ids with its ``origin`` / ``origin_name``."""
        if not self._own(chunk.id):
            return chunk
        return chunk.model_copy(
            update={
                "id": self._shown(chunk.id),
                "document_id": self._shown(chunk.document_id),
                "metadata": _unstamped(chunk.metadata),
            }
        )

    def _record_to_store(self, document: Document) -> Document:
        meta = self._stamp(document.metadata)
        ids = meta.get("chunk_ids")
        if isinstance(ids, list):
            meta["chunk_ids"] = [self.origin.stored(str(i)) for i in ids]
        return document.model_copy(update={"id": self.origin.stored(document.id), "metadata": meta})

    def _record_from_store(self, document: Document) -> Document:
        meta = _unstamped(document.metadata)
        ids = meta.get("chunk_ids")
        if isinstance(ids, list):
            meta["chunk_ids"] = [self._shown(str(i)) for i in ids]
        return document.model_copy(update={"id": self._shown(document.id), "metadata": meta})

    def _hits(self, hits: list[Hit]) -> list[Hit]:
        return [h.model_copy(update={"chunk": self._from_store(h.chunk)}) for h in hits]

    def _and_mine(self, filter: Filter | None) -> Filter:
        return self._mine if filter is None else And(filters=[filter, self._mine])

    # -- the Store protocol -------------------------------------------------------------------
    def get_identity(self) -> IndexIdentity | None:
        return self.inner.get_identity()

    def set_identity(self, identity: IndexIdentity) -> None:
        self.inner.set_identity(identity)

    def upsert(self, chunks: Sequence[Chunk]) -> None:
        self.inner.upsert([self._to_store(c) for c in chunks])

    def get(self, ids: Sequence[str]) -> list[Chunk]:
        return [self._from_store(c) for c in self.inner.get([self.stored(i) for i in ids])]

    def delete(self, ids: Sequence[str]) -> None:
        """Only this origin's chunks: another origin's ids are left alone."""
        self.inner.delete([self.origin.stored(i) for i in ids if not self.foreign(i)])

    def delete_documents(self, document_ids: Sequence[str]) -> None:
        """Only this origin's documents: another origin's ids are left alone."""
        mine = [self.origin.stored(d) for d in document_ids if not self.foreign(d)]
        if mine:
            self.inner.delete_documents(mine)

    def delete_where(self, filter: Filter) -> None:
        self.inner.delete_where(self._and_mine(filter))

    def count(self, filter: Filter | None = None) -> int:
        """This origin's chunks (``origin_counts`` counts every origin's)."""
        return self.inner.count(self._and_mine(filter))

    def iter_chunks(self, batch_size: int = 500) -> Iterator[list[Chunk]]:
        """This origin's chunks (migration, checks and rebuilds act on one's own rows)."""
        for batch in self.inner.iter_chunks(batch_size):
            mine = [self._from_store(c) for c in batch if self._own(c.id)]
            if mine:
                yield mine

    def put_document(self, document: Document) -> None:
        self.inner.put_document(self._record_to_store(document))

    def list_documents(self) -> dict[str, Document]:
        """This origin's records, under the ids it gave them."""
        mine = (self._record_from_store(d) for i, d in self.all_documents().items() if self._own(i))
        return {d.id: d for d in mine}

    def vector_search(
        self, vector: Sequence[float], k: int, filter: Filter | None = None
    ) -> list[Hit]:
        """Every origin's chunks: a team's memory is searched whole."""
        return self._hits(self.inner.vector_search(vector, k, filter))

    def keyword_search(self, query: str, k: int, filter: Filter | None = None) -> list[Hit]:
        return self._hits(self.inner.keyword_search(query, k, filter))

    def keyword_ceiling(self, query: str) -> float | None:
        """The shared store's ceiling (``KeywordCeiling``): every origin's chunks count, as in
        its ranking; None when the store has none (fusion is then relative)."""
        if isinstance(self.inner, KeywordCeiling):
            return self.inner.keyword_ceiling(query)
        return None

    def reset(self) -> None:
        """Empty this origin's part of the store: its chunks and records. Other origins' rows
        and the shared identity stay (they are other machines' indexes)."""
        own = [d for d in self.inner.list_documents() if self._own(d)]
        self.inner.delete_where(self._mine)
        if own:
            self.inner.delete_documents(own)

    def close(self) -> None:
        self.inner.close()

    # -- reading across origins ---------------------------------------------------------------
    def all_documents(self) -> dict[str, Document]:
        """Every origin's records, under the ids the store keeps."""
        return self.inner.list_documents()

    def foreign_document(self, some_id: str) -> Document | None:
        """The record of another origin's document (its text in ``metadata["text"]``)."""
        if not self.foreign(some_id):
            return None
        return self.all_documents().get(some_id)

    def origins(self) -> dict[str, str]:
        """Origin id → readable name of every origin with a record on the store."""
        found: dict[str, str] = {}
        for doc in self.all_documents().values():
            parts = split_stored(doc.id)
            origin_id = parts[0] if parts else ""
            name = doc.metadata.get(ORIGIN_NAME_KEY)
            found.setdefault(
                origin_id, name if isinstance(name, str) else origin_id or "unassigned"
            )
        return found

    def origin_counts(self) -> dict[str, dict[str, Any]]:
        """Per origin name: its id, documents and chunks (``engram stats``)."""
        docs: dict[str, int] = {}
        for stored_id in self.all_documents():
            parts = split_stored(stored_id)
            key = parts[0] if parts else ""
            docs[key] = docs.get(key, 0) + 1
        names = self.origins()
        out: dict[str, dict[str, Any]] = {}
        for origin_id, count in sorted(docs.items()):
            chunks = self.inner.count(Eq(field=ORIGIN_KEY, value=origin_id)) if origin_id else None
            out[names.get(origin_id, origin_id)] = {
                "id": origin_id or None,
                "documents": count,
                "chunks": chunks,
                "this_vault": origin_id == self.origin.id,
            }
        return out

    def resolve_origin(self, name_or_id: str) -> str:
        """An origin's id from its id or its readable name (which must name one origin)."""
        known = self.origins()
        if name_or_id in known:
            return name_or_id
        matches = [i for i, n in known.items() if n == name_or_id]
        if len(matches) == 1:
            return matches[0]
        listed = ", ".join(f"{n} ({i})" for i, n in sorted(known.items())) or "none"
        if matches:
            raise ConfigError(
                f"{len(matches)} origins are named {name_or_id!r}; give the id instead "
                f"(origins: {listed})"
            )
        raise ConfigError(f"no origin {name_or_id!r} on this store (origins: {listed})")

    def diagnostics(self) -> dict[str, Any]:
        inner = self.inner.diagnostics() if isinstance(self.inner, Diagnoses) else {}
        return {**inner, "origin": {"id": self.origin.id, "name": self.origin.name}}


def _unstamped(metadata: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in metadata.items() if k not in (ORIGIN_KEY, ORIGIN_NAME_KEY)}


class _Prunes:
    def prune_document(self: Any, document_id: str, keep: Sequence[str]) -> None:
        if not self.foreign(document_id):
            self.inner.prune_document(
                self.origin.stored(document_id), [self.origin.stored(k) for k in keep]
            )


class _Replaces:
    def replace_document(self: Any, document: Document, chunks: Sequence[Chunk]) -> None:
        self.inner.replace_document(
            self._record_to_store(document), [self._to_store(c) for c in chunks]
        )


class _Optimizes:
    def optimize(self: Any) -> Any:
        return self.inner.optimize()
