"""Opening Chroma (embedded or a server), the three collections, and Chroma's errors in engram's
words: a server that cannot be reached is told apart from a collection that is damaged (records
that lost engram's metadata, an unreadable identity, a server error about the collection's
segments), which is an ``IndexDamaged`` naming the server and the collection.

Chroma never gets an embedding function (engram embeds; Chroma's default one would download a
model) and its product telemetry is off in every client this module builds.
"""

from __future__ import annotations

import os
import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any, cast

import chromadb
import httpx
from chromadb.api import ClientAPI
from chromadb.api.collection_configuration import CreateCollectionConfiguration
from chromadb.api.models.Collection import Collection
from chromadb.config import Settings
from chromadb.errors import ChromaError, NotFoundError

from engram import IndexDamaged, MissingKeyError, RemoteIndexDamaged, StoreError
from engram_chroma.options import ChromaOptions
from engram_chroma.records import Unreadable

META_SUFFIX = "__engram_meta"
LOG_SUFFIX = "__engram_log"
DELETE_BATCH = 5000
# What a Chroma server says when a collection's own data is broken (not when it is down):
# "Missing field: [Missing vector segment]", HNSW files or its SQLite that cannot be loaded.
BROKEN = re.compile(
    r"segment|hnsw|corrupt|malformed|disk image|no such table|failed to (load|read|deserial)",
    re.IGNORECASE,
)


def settings() -> Settings:
    return Settings(anonymized_telemetry=False)


def open_client(options: ChromaOptions) -> ClientAPI:
    """A client for ``options``; an unreachable server or unusable folder is a ``StoreError``."""
    if options.mode == "embedded":
        try:
            options.path.mkdir(parents=True, exist_ok=True)
            return chromadb.PersistentClient(
                path=str(options.path),
                settings=settings(),
                tenant=options.tenant,
                database=options.database,
            )
        except (OSError, ValueError, ChromaError) as exc:
            raise StoreError(
                f"cannot open {options.where}: {exc}; check that the folder is writable and not "
                f"used by another program, or set [store] path to another folder"
            ) from None
    return _server_client(options, _token(options))


def _token(options: ChromaOptions) -> str | None:
    if options.token_env is None:
        return None
    token = os.environ.get(options.token_env)
    if not token:
        raise MissingKeyError(
            f"the Chroma server token is read from ${options.token_env}, which is not set; "
            f"export {options.token_env}=<token> or remove token_env from [store]"
        )
    return token


_SERVER_CLIENTS: dict[tuple[str, int, bool, str, str, str | None], ClientAPI] = {}
_SERVER_LOCK = threading.Lock()


def _server_client(options: ChromaOptions, token: str | None) -> ClientAPI:
    """One HTTP client per server (and tenant, database, token), shared by the stores of this
    process: building one costs a TLS context and two requests, and it holds no per-store state
    (a restarted server is reconnected to on the next request)."""
    key = (options.host, options.port, options.ssl, options.tenant, options.database, token)
    with _SERVER_LOCK:
        client = _SERVER_CLIENTS.get(key)
        if client is None:
            client = _SERVER_CLIENTS[key] = _connect(options, token)
        return client


def _connect(options: ChromaOptions, token: str | None) -> ClientAPI:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    try:
        return chromadb.HttpClient(
            host=options.host,
            port=options.port,
            ssl=options.ssl,
            headers=headers,
            settings=settings(),
            tenant=options.tenant,
            database=options.database,
        )
    except (ValueError, httpx.HTTPError, ChromaError) as exc:
        raise StoreError(unreachable(options, "connecting", exc)) from None


def unreachable(options: ChromaOptions, action: str, exc: BaseException) -> str:
    return (
        f"cannot reach {options.where} while {action} ({type(exc).__name__}: {exc}); start it "
        f"(chroma run --path DIR --host {options.host} --port {options.port}) or fix [store] "
        f"host and port, then run the same command again: writes are idempotent, so nothing is "
        f"lost or duplicated"
    )


@contextmanager
def chroma_errors(
    options: ChromaOptions, action: str, client: ClientAPI | None = None
) -> Iterator[None]:
    """Turn Chroma and transport errors into ``StoreError`` (a damaged collection into
    ``IndexDamaged``, which ``client`` can clear on an explicit rebuild); ``NotFoundError``
    passes through so the store can reopen collections another client dropped (``reset``)."""
    try:
        yield
    except NotFoundError:
        raise
    except httpx.HTTPError as exc:
        raise StoreError(unreachable(options, action, exc)) from None
    except Unreadable as exc:
        raise damaged(options, f"{exc}, while {action}", client) from None
    except ChromaError as exc:
        if BROKEN.search(str(exc)):
            raise damaged(options, f"the server answered {exc!s}, while {action}", client) from None
        raise StoreError(f"{options.where} refused {action}: {exc}") from None


def damaged(options: ChromaOptions, detail: str, client: ClientAPI | None) -> IndexDamaged:
    """The damage in words; a server's collection is never cleared without being asked."""
    if options.mode == "embedded":
        return IndexDamaged(
            f"the Chroma collection {options.collection!r} in {options.path} is damaged "
            f"({detail}); run `engram rebuild` to recreate it from the markdown files",
            detail=detail,
        )
    scheme = "https" if options.ssl else "http"
    where = f"{scheme}://{options.host}:{options.port} (collection {options.collection!r}"
    if (options.tenant, options.database) != ("default_tenant", "default_database"):
        where += f", tenant {options.tenant!r}, database {options.database!r}"
    clear: Callable[[], None] | None = None
    if client is not None:
        server = client

        def clear() -> None:
            with chroma_errors(options, "dropping the damaged collections"):
                drop_collections(server, options)

    return RemoteIndexDamaged(
        where=where + ")", lives_on="a Chroma server", detail=detail, clear=clear
    )


@dataclass(frozen=True)
class Collections:
    """The chunk collection and its two helpers, opened together."""

    chunks: Collection
    meta: Collection
    log: Collection


def open_collections(client: ClientAPI, options: ChromaOptions) -> Collections:
    """Get or create the three collections (cosine space, no embedding function)."""
    hnsw: dict[str, Any] = {
        "space": "cosine",
        "ef_search": options.hnsw_ef_search,
        "ef_construction": options.hnsw_ef_construction,
        "max_neighbors": options.hnsw_max_neighbors,
    }
    chunks = _get_or_create(client, options.collection, hnsw)
    space = (chunks.configuration_json.get("hnsw") or {}).get("space", "cosine")
    if space != "cosine":
        raise StoreError(
            f"the Chroma collection {options.collection!r} uses {space!r} distance, but engram "
            f"needs cosine; set [store] collection to a new name, or delete that collection"
        )
    small = {"space": "cosine"}
    meta = _get_or_create(client, options.collection + META_SUFFIX, small)
    log = _get_or_create(client, options.collection + LOG_SUFFIX, small)
    return Collections(chunks=chunks, meta=meta, log=log)


def drop_collections(client: ClientAPI, options: ChromaOptions) -> None:
    """Delete the three collections; ones already gone are not an error.

    Their records are deleted first: Chroma 1.5 leaves the array metadata of a dropped
    collection's records behind, and records created later can inherit it.
    """
    for name in (
        options.collection,
        options.collection + META_SUFFIX,
        options.collection + LOG_SUFFIX,
    ):
        with suppress(NotFoundError):
            collection = client.get_collection(name, embedding_function=None)
            try:
                ids = collection.get(include=[])["ids"]
                for start in range(0, len(ids), DELETE_BATCH):
                    collection.delete(ids=ids[start : start + DELETE_BATCH])
            except ChromaError as exc:  # a damaged collection: drop it whole
                if isinstance(exc, NotFoundError) or not BROKEN.search(str(exc)):
                    raise
            client.delete_collection(name)


def _get_or_create(client: ClientAPI, name: str, hnsw: dict[str, Any]) -> Collection:
    configuration = cast(CreateCollectionConfiguration, {"hnsw": hnsw})
    return client.get_or_create_collection(
        name, configuration=configuration, embedding_function=None
    )
