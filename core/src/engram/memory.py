"""The façade: ``Memory.open()`` wires config, plugins, store, embedder, cache and searcher, and
offers what users and agents do: index, search, get, rebuild, stats.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pluggy

from engram.closing import ClosingStore
from engram.collections import Collection
from engram.config import EngramConfig, load_config
from engram.embedding.cache import CachedEmbedder, EmbeddingCache
from engram.errors import IndexDamaged, UnsafePath
from engram.filters import Filter
from engram.ingest.excerpts import excerpt_of, inside_vault, text_excerpt
from engram.ingest.report import IndexReport, Progress, merge_reports
from engram.ingest.scan import Finder
from engram.ingest.sessions import sync as sessions
from engram.ingest.sources import FileLabels
from engram.ingest.sync import sync_vault
from engram.ingest.vault import Selection
from engram.memories import agent as memories
from engram.memories import aging as memory_aging
from engram.memories import entry as search_entry
from engram.memories import prune as pruning
from engram.memories import recall as recalling
from engram.memories import stats
from engram.memories.access import AccessCounter
from engram.memories.lifecycle import chains
from engram.memories.lifecycle import history as histories
from engram.memories.lifecycle import restore as restoring
from engram.memories.policy import MemorySearch
from engram.memories.scopes import MemoryFolder, Scope
from engram.memories.writer import Writer
from engram.models import (
    Document,
    Excerpt,
    MemoryInfo,
    MemoryType,
    Message,
    OnCollision,
    SearchMode,
    SearchResult,
    StoredMemory,
)
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Closes, Embedder, Extractor, Searcher, Store
from engram.registry import Registry
from engram.stores import damage as damage_mark
from engram.stores import recovery
from engram.stores.origins import TEXT_KEY, OriginStore, refuse_foreign
from engram.stores.parts import build_part

if TYPE_CHECKING:  # capture (transcripts, extraction) loads when used: recall and search don't
    from engram.memories import capture as capturing

__all__ = ["Excerpt", "Memory"]

log = logging.getLogger(__name__)


class Memory(ClosingStore):
    """An open memory: one store, one embedder (behind the shared cache), one searcher."""

    def __init__(
        self,
        config: EngramConfig,
        registry: Registry,
        store: Store,
        embedder: CachedEmbedder,
        searcher: Searcher,
    ) -> None:
        self.config = config
        self.registry = registry
        self.store = store
        self.embedder = embedder
        self.searcher = searcher
        self.notices: list[str] = []  # said once when opened (an index rebuilt after damage)
        self.writer = Writer(
            config, store, embedder, lambda: build_part(config, registry, "extractor")
        )
        # The search policy (history, recency, per document) recall and collections share.
        self.searching = MemorySearch(
            config.search, store, embedder, searcher, lambda: self.check_identity(writing=False)
        )

    @classmethod
    def open(
        cls,
        config: EngramConfig | None = None,
        *,
        overrides: dict[str, Any] | None = None,
        plugin_manager: pluggy.PluginManager | None = None,
        clear_remote: bool = False,
        suspect: IndexDamaged | None = None,
    ) -> Memory:
        """``clear_remote``: for ``engram rebuild`` only; ``suspect``: damage an open store
        reported, healed here (both: see ``recovery.open_store``)."""
        config = config or load_config(overrides)
        registry = build_registry(plugin_manager or get_plugin_manager())
        return cls._open_with(config, registry, clear_remote=clear_remote, suspect=suspect)

    def reopen(self, *, suspect: IndexDamaged | None = None) -> Memory:
        """A new memory over the same configuration and plugins (this one is left open): what a
        long-lived process does when its index was replaced, removed or damaged under it."""
        return type(self)._open_with(self.config, self.registry, suspect=suspect)

    @classmethod
    def _open_with(
        cls,
        config: EngramConfig,
        registry: Registry,
        *,
        clear_remote: bool = False,
        suspect: IndexDamaged | None = None,
    ) -> Memory:
        try:
            store, damaged = recovery.open_store(
                config, registry, clear_remote=clear_remote, suspect=suspect
            )
        except IndexDamaged as exc:
            damage_mark.record(config, exc)
            raise
        # A store that made its index file just now, in a project whose embedding cache shows
        # an index was made here before: the index was deleted, and an empty one beside the
        # vault would answer "no results" for everything it holds. It is rebuilt (see below).
        cache_path = config.resolve(config.cache.path)
        lost = getattr(store, "created", False) is True and damaged is None and cache_path.exists()
        try:
            inner: Embedder = build_part(config, registry, "embedder")
            cache = (
                EmbeddingCache(config.resolve(config.cache.path)) if config.cache.enabled else None
            )
            searcher: Searcher = build_part(config, registry, "searcher")
        except BaseException:
            store.close()
            raise
        memory = cls(config, registry, store, CachedEmbedder(inner, cache), searcher)
        if damaged is not None:
            memory.notices.append(recovery.rebuild(damaged, memory))
        elif lost:
            memory.notices.append(recovery.rebuild_missing(memory))
        return memory

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()
        if self.embedder.cache is not None:
            self.embedder.cache.close()
        # API embedders and extractors hold HTTP clients and a usage ledger.
        for part in (self.embedder.inner, self.writer.built_extractor):
            if isinstance(part, Closes):
                part.close()
        self.access.close()

    # -- the writer's parts, for callers that knew them here -----------------------------------
    @property
    def folders(self) -> list[MemoryFolder]:
        return self.writer.folders

    @property
    def access(self) -> AccessCounter:
        return self.writer.access

    def check_identity(self, *, writing: bool) -> None:
        """Refuse to mix vectors of two embedders; record the identity on a store's first write."""
        self.writer.check_identity(writing=writing)

    @property
    def memory_dir(self) -> Path:
        """The project's memory folder (``[memory] dir``), resolved: where memories go."""
        return self.writer.memory_dir

    @property
    def extractor(self) -> Extractor | None:
        """The configured extractor, built on first use; None when it cannot be built."""
        return self.writer.extractor

    def default_roots(self) -> list[Path]:
        """What ``index()`` reads by default: the vault, plus the memory and collections folders
        that exist (named on their own, so hidden, git-ignored or outside ones are indexed)."""
        roots = [self.config.resolve(p).resolve() for p in self.config.vault.paths]
        for folder in [*(f.path for f in self.folders), self._collections_dir()]:
            if folder.is_dir() and folder not in roots:
                roots.append(folder)
        return roots

    def _collections_dir(self) -> Path:
        return self.config.resolve(self.config.memory.collections_dir).resolve()

    def vault_roots(self, documents: Mapping[str, Document] | None = None) -> list[Path]:
        """Configured vault folders, the memory and collections folders and every root
        something was indexed from (read from ``documents`` when the caller has them)."""
        roots = [self.config.resolve(p).resolve() for p in self.config.vault.paths]
        for folder in [*(f.path for f in self.folders), self._collections_dir()]:
            if folder not in roots:
                roots.append(folder)
        if documents is None:
            documents = self.store.list_documents()
        for doc in documents.values():
            root = doc.metadata.get("root")
            if isinstance(root, str) and Path(root) not in roots:
                roots.append(Path(root))
        return roots

    def index(
        self,
        paths: Sequence[Path | str] | None = None,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> IndexReport:
        """Index new and changed markdown under ``paths`` (default: the configured vault)."""
        roots = [self.config.resolve(p).resolve() for p in paths] if paths else self.default_roots()
        if not dry_run:
            self.check_identity(writing=True)
            chains.repair(self.writer)  # the newer memories' `supersedes` are the truth
        vault = self.config.vault
        labels = FileLabels([*(f.path for f in self.folders), self._collections_dir()])
        selection = Selection(vault.include, vault.exclude)
        report = sync_vault(
            roots,
            self.store,
            self.embedder,
            self.writer.make_chunks,
            find=Finder(self.config.root, selection, vault.respect_gitignore, labels),
            max_file_bytes=vault.max_file_bytes,
            dry_run=dry_run,
            progress=progress,
            resolved=True,  # both ways of getting them above resolve them
        )
        if not (report.unchanged or report.new or report.changed or report.skipped):
            report.warnings.append(
                f"no markdown files found under {', '.join(str(r) for r in roots)} "
                f"(include: {', '.join(vault.include)})"
            )
        return report

    def rebuild(self, *, progress: Progress | None = None) -> IndexReport:
        """Recreate the store from its sources alone (new embedder, chunker or a broken index):
        the markdown, and the agent sessions when ``[sessions]`` is on or the store held any."""
        try:
            self.store.get_identity()  # a lost identity record is damage too
            documents = self.store.list_documents()
            damaged = False
        except IndexDamaged:  # unreadable records: the configured folders; reset drops them
            documents, damaged = {}, True
        roots = [r for r in self.vault_roots(documents) if r.exists()]
        had_sessions = any(d.metadata.get("source") == sessions.SOURCE for d in documents.values())
        damage_mark.clear(self.config)  # what was called damaged is made anew: writes may go on
        emptied_whole = self._reset_for_rebuild(damaged)
        report = self.index(roots, progress=progress)
        if emptied_whole:
            report.warnings.append(
                "the shared index was damaged and unreadable, so it was emptied whole; the "
                "other machines that share it put their documents back with `engram index`"
            )
        if self.config.sessions.enabled or had_sessions:
            merge_reports(report, self.index_sessions(progress=progress))
        return report

    def _reset_for_rebuild(self, damaged: bool) -> bool:
        """Empty what this vault rebuilds: the store, or on a shared store this origin's part.
        A shared index too damaged to read or to delete from is no one's any more: it is
        emptied whole (True), and each other machine's next `engram index` puts its documents
        back from its markdown."""
        store = self.store
        if not isinstance(store, OriginStore):
            store.reset()
            return False
        if not damaged:
            try:
                store.reset()
                return False
            except IndexDamaged:
                pass
        store.inner.reset()
        return True

    # -- agent memories, sessions, recall ------------------------------------------------------
    # Thin entry points: the work lives in engram.memories, .capture, .recall, .lifecycle …
    def remember(
        self,
        content: str,
        *,
        title: str | None = None,
        type: MemoryType = "note",
        scope: Scope = "project",
        tags: Sequence[str] = (),
        source: str = "agent",
        path: str | None = None,
        importance: float = 1.0,
        subject: str | None = None,
        attribute: str | None = None,
        value: str | None = None,
        on_collision: OnCollision | None = None,
    ) -> StoredMemory:
        """Write a memory as a markdown file (atomically, private spans removed), or merge it
        into a near-duplicate; supersede what it contradicts; index it. ``subject``,
        ``attribute``, ``value``: what it is about (read from the text when not given).
        ``on_collision``: a taken file name keeps both (new), updates that memory, or fails."""
        return memories.remember(
            self.writer,
            content,
            title=title,
            type=type,
            scope=scope,
            tags=tags,
            source=source,
            path=path,
            importance=importance,
            subject=subject,
            attribute=attribute,
            value=value,
            on_collision=on_collision,
        )

    def forget(self, id_or_path: str) -> list[str]:
        """Remove a memory file and all of its chunks; returns the paths removed."""
        refuse_foreign(self.store, id_or_path)  # another machine's, on a shared store
        return memories.forget(self.writer, id_or_path)

    def list_memories(
        self,
        *,
        type: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
        include_superseded: bool = False,
        subject: str | None = None,
    ) -> list[MemoryInfo]:
        """Memory files matching every filter given, newest first."""
        return memories.list_memories(
            self.writer,
            type=type,
            scope=scope,
            tag=tag,
            since=since,
            until=until,
            limit=limit,
            include_superseded=include_superseded,
            subject=subject,
        )

    def capture(
        self,
        messages: Sequence[Message],
        mode: str = "normal",
        *,
        scope: Scope = "project",
        source: str = "capture",
    ) -> capturing.CaptureReport:
        """Turn a conversation into memories with the configured extractor; never raises for
        the extractor's failures (they are warnings in the report)."""
        from engram.memories import capture as capturing

        return capturing.capture(self.writer, messages, mode, scope=scope, source=source)

    def capture_sessions(
        self, *, progress: Progress | None = None
    ) -> capturing.SessionCaptureReport:
        """Capture memories from indexed sessions that grew since their last capture."""
        from engram.memories import capture as capturing

        return capturing.capture_sessions(self.writer, progress=progress)

    def history(self, id_or_path: str) -> histories.History:
        """A memory and the chain of memories it superseded or was superseded by."""
        refuse_foreign(self.store, id_or_path)  # another machine's, on a shared store
        target = memories.find(self.writer, id_or_path)[0]
        return histories.history(memories.all_memories(self.writer), target, self.config.root)

    def restore(self, id_or_path: str, revision: int | None = None) -> StoredMemory:
        """Bring an earlier version of a memory back; what it replaces stays as a revision."""
        refuse_foreign(self.store, id_or_path)  # another machine's, on a shared store
        return restoring.restore(self.writer, memories.find(self.writer, id_or_path)[0], revision)

    def age(self, *, dry_run: bool = False) -> memory_aging.AgingReport:
        """Apply the aging rules (latest progress only, old session summaries condensed)."""
        return memory_aging.age(self.writer, memories.remember, dry_run=dry_run)

    def prune(
        self,
        *,
        max_age_days: float | None = None,
        max_count: int | None = None,
        scope: str = "project",
        dry_run: bool = False,
    ) -> pruning.PruneReport:
        """Remove low-importance, long-unused memories first (``--dry-run`` only lists them)."""
        return pruning.prune(
            self.writer,
            max_age_days=max_age_days,
            max_count=max_count,
            scope=scope,
            dry_run=dry_run,
        )

    def index_sessions(self, *, progress: Progress | None = None) -> IndexReport:
        """Index agent transcripts (``[sessions]``): new and grown sessions, skip unchanged."""
        self.check_identity(writing=True)
        return sessions.index_sessions(self.config, self.store, self.embedder, progress=progress)

    def recall(
        self, query: str | None = None, *, budget: int | None = None, source: str | None = None
    ) -> recalling.Recall:
        """The context block for the start of a session, never over ``budget`` tokens."""
        return recalling.recall(self.writer, self.searching, query, budget=budget, source=source)

    def collection(self, name: str) -> Collection:
        """Documents with the caller's own ids (LangChain, LlamaIndex), kept as markdown under
        ``[memory] collections_dir``/``name``."""
        return Collection(self.writer, self.searching, name)

    # -- reading -------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: SearchMode | None = None,
        limit: int | None = None,
        filter: Filter | None = None,
        include_superseded: bool = False,
        recency_weight: float | None = None,
        count_access: bool = True,
        per_document: bool | None = None,
        type: MemoryType | None = None,
        subject: str | None = None,
    ) -> SearchResult:
        """Rank chunks for ``query`` (``engram.memories.entry``: a query naming a memory type, or
        ``type``, gets that type's memories first; ``type`` keeps only them, ``subject`` only
        memories about it, any case). History is left out unless ``include_superseded``;
        ``recency_weight`` (default ``[search]``) blends in how new a hit is; ``per_document``
        keeps each document's best chunk, so ``limit`` counts documents. Memory hits count as
        accesses (``engram prune`` reads them) unless ``count_access`` is False (recall counts
        only what its block holds)."""
        result = search_entry.search(
            self.searching,
            query,
            mode=mode,
            limit=limit,
            filter=filter,
            memory_type=type,
            subject=subject,
            include_superseded=include_superseded,
            recency_weight=recency_weight,
            per_document=per_document,
        )
        if count_access:
            self.access.record_hits(result.hits)
        return result

    def get(self, path: str | Path, lines: tuple[int, int] | None = None) -> Excerpt:
        """Lines of a file inside the vault, or turns of an indexed session (``sessions/...``,
        as search shows it); anything else is refused with ``UnsafePath``."""
        session = sessions.session_document(self.store, str(path))
        if session is not None:
            return sessions.session_excerpt(session, self.config, lines)
        elsewhere = self.foreign_excerpt(str(path), lines)
        if elsewhere is not None:
            return elsewhere
        return excerpt_of(str(path), self.resolve_vault_path(path), lines)

    def foreign_excerpt(self, path: str, lines: tuple[int, int] | None) -> Excerpt | None:
        """Lines of another machine's document on a shared store (``<origin id>:<path>``, as its
        search hits show it), read from the text the server keeps; None for any other path."""
        if not isinstance(self.store, OriginStore) or not self.store.foreign(path):
            return None
        record = self.store.foreign_document(path)
        text = record.metadata.get(TEXT_KEY) if record is not None else None
        if record is None or not isinstance(text, str):
            name = self.store.origins().get(path.split(":", 1)[0], "another machine")
            raise UnsafePath(
                f"{path} is {name}'s document and the server keeps no text of it (it was "
                "indexed before origins kept texts, or is gone); ask that machine to run "
                "`engram rebuild`"
            )
        return text_excerpt(path, text, lines)

    def resolve_vault_path(self, path: str | Path) -> Path:
        """``path`` (relative to the project, or absolute) resolved; ``UnsafePath`` outside."""
        return inside_vault(path, self.config.root, self.vault_roots())

    def stats(self) -> dict[str, Any]:
        """Documents, chunks and memories by source, type and scope (``engram.memories.stats``)."""
        every = self.list_memories(include_superseded=True)
        found = stats.collect(self.config, self.store, self.embedder.cache, self.folders, every)
        if isinstance(self.store, OriginStore):  # a shared store: every machine's part
            found["origin"] = {"id": self.store.origin.id, "name": self.store.origin.name}
            found["origins"] = self.store.origin_counts()
        return found
