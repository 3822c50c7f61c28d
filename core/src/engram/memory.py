"""The façade: ``Memory.open()`` wires config, plugins, store, embedder, cache and searcher, and
offers what users and agents do: index, search, get, rebuild, stats.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

import pluggy
from pydantic import BaseModel

from engram.cache import CachedEmbedder, EmbeddingCache
from engram.chunking import make_chunker
from engram.config import EngramConfig, load_config, plugin_options
from engram.errors import ConfigError, IdentityMismatch, UnsafePath
from engram.filters import Filter
from engram.ingest.sync import IndexReport, Progress, chunk_markdown_document, sync_files
from engram.ingest.vault import discover
from engram.models import IndexIdentity, SearchMode, SearchResult
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Embedder, Searcher, Store, embedder_identity
from engram.redact import strip_private
from engram.registry import Registry

if TYPE_CHECKING:
    from engram.memories import MemoryInfo, Scope, StoredMemory
    from engram.models import MemoryType
    from engram.recall import Recall


class Excerpt(BaseModel):
    """Lines of a vault file, as ``engram get`` and the ``memory_get`` tool return them."""

    path: str
    start_line: int
    end_line: int
    total_lines: int
    text: str


class Memory:
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
        self.chunker = make_chunker(config.chunking)

    @classmethod
    def open(
        cls,
        config: EngramConfig | None = None,
        *,
        overrides: dict[str, Any] | None = None,
        plugin_manager: pluggy.PluginManager | None = None,
    ) -> Memory:
        config = config or load_config(overrides)
        registry = build_registry(plugin_manager or get_plugin_manager())
        store = build_part(config, registry, "store")
        try:
            inner: Embedder = build_part(config, registry, "embedder")
            cache = (
                EmbeddingCache(config.resolve(config.cache.path)) if config.cache.enabled else None
            )
            searcher: Searcher = build_part(config, registry, "searcher")
        except BaseException:
            store.close()
            raise
        return cls(config, registry, store, CachedEmbedder(inner, cache), searcher)

    # -- lifecycle -----------------------------------------------------------------------------
    def close(self) -> None:
        self.store.close()
        if self.embedder.cache is not None:
            self.embedder.cache.close()
        # API embedders hold HTTP clients and a usage ledger.
        close_embedder = getattr(self.embedder.inner, "close", None)
        if callable(close_embedder):
            close_embedder()

    def __enter__(self) -> Memory:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # -- identity ------------------------------------------------------------------------------
    @property
    def identity(self) -> IndexIdentity:
        return embedder_identity(self.embedder, self.config.chunking.describe())

    def check_identity(self, *, writing: bool) -> None:
        """Refuse to mix vectors of two embedders; record the identity on a store's first write."""
        wanted = self.identity
        current = self.store.get_identity()
        if current is None:
            if writing:
                self.store.set_identity(wanted)
            return
        same_vectors = (current.embedder, current.model, current.dimension) == (
            wanted.embedder,
            wanted.model,
            wanted.dimension,
        )
        if current == wanted or (same_vectors and not writing):
            return
        raise IdentityMismatch(
            f"the store was built with {current.describe()} but the config asks for "
            f"{wanted.describe()}; run `engram rebuild` to re-index with the new settings, "
            f"or set the embedder/chunking back to what the store was built with"
        )

    # -- indexing ------------------------------------------------------------------------------
    @property
    def memory_dir(self) -> Path:
        """The folder agent memories are written to (``[memory] dir``), resolved."""
        return self.config.resolve(self.config.memory.dir).resolve()

    def default_roots(self) -> list[Path]:
        """What ``index()`` reads by default: the vault, plus the memory folder once it exists
        (named on its own so hidden or git-ignored memory folders are still indexed)."""
        roots = [self.config.resolve(p).resolve() for p in self.config.vault.paths]
        if self.memory_dir.is_dir() and self.memory_dir not in roots:
            roots.append(self.memory_dir)
        return roots

    def vault_roots(self) -> list[Path]:
        """Configured vault folders, the memory folder and every root something was indexed
        from."""
        roots = [self.config.resolve(p).resolve() for p in self.config.vault.paths]
        if self.memory_dir not in roots:
            roots.append(self.memory_dir)
        for doc in self.store.list_documents().values():
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
        vault = self.config.vault
        files = discover(
            roots,
            project_root=self.config.root,
            include=vault.include,
            exclude=vault.exclude,
            respect_gitignore=vault.respect_gitignore,
        )
        report = sync_files(
            files,
            roots,
            self.store,
            self.embedder,
            functools.partial(chunk_markdown_document, self.chunker),
            max_file_bytes=vault.max_file_bytes,
            dry_run=dry_run,
            progress=progress,
        )
        if not files:
            report.warnings.append(
                f"no markdown files found under {', '.join(str(r) for r in roots)} "
                f"(include: {', '.join(vault.include)})"
            )
        return report

    def rebuild(self, *, progress: Progress | None = None) -> IndexReport:
        """Recreate the store from the markdown alone (new embedder, chunker or a broken index)."""
        roots = [r for r in self.vault_roots() if r.exists()]
        self.store.reset()
        report = self.index(roots, progress=progress)
        if self.config.sessions.enabled:
            from engram.ingest.sessions.sync import merge_reports

            merge_reports(report, self.index_sessions())
        return report

    # -- agent memories, sessions, recall ------------------------------------------------------
    # Thin entry points; the work lives in engram.memories / .recall / .ingest.sessions, which
    # build on this façade, so they are imported on use rather than at the top (no cycle).
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
    ) -> StoredMemory:
        """Write a memory as a markdown file (atomically, private spans removed), index it."""
        from engram.memories import remember

        return remember(
            self, content, title=title, type=type, scope=scope, tags=tags, source=source, path=path
        )

    def forget(self, id_or_path: str) -> list[str]:
        """Remove a memory file and all of its chunks; returns the paths removed."""
        from engram.memories import forget

        return forget(self, id_or_path)

    def list_memories(
        self,
        *,
        type: str | None = None,
        scope: str | None = None,
        tag: str | None = None,
        since: str | None = None,
        until: str | None = None,
        limit: int | None = None,
    ) -> list[MemoryInfo]:
        """Memory files matching every filter given, newest first."""
        from engram.memories import list_memories

        return list_memories(
            self, type=type, scope=scope, tag=tag, since=since, until=until, limit=limit
        )

    def index_sessions(self, *, progress: Progress | None = None) -> IndexReport:
        """Index agent transcripts (``[sessions]``): new and grown sessions, skip unchanged."""
        from engram.ingest.sessions.sync import index_sessions

        return index_sessions(self, progress=progress)

    def recall(
        self, query: str | None = None, *, budget: int | None = None, source: str | None = None
    ) -> Recall:
        """The context block for the start of a session, never over ``budget`` tokens."""
        from engram.recall import recall

        return recall(self, query, budget=budget, source=source)

    # -- reading -------------------------------------------------------------------------------
    def search(
        self,
        query: str,
        *,
        mode: SearchMode | None = None,
        limit: int | None = None,
        filter: Filter | None = None,
    ) -> SearchResult:
        self.check_identity(writing=False)
        return self.searcher.search(
            strip_private(query),
            self.store,
            self.embedder,
            mode=mode or self.config.search.mode,
            limit=limit or self.config.search.limit,
            filter=filter,
        )

    def get(self, path: str | Path, lines: tuple[int, int] | None = None) -> Excerpt:
        """Lines of a file inside the vault; anything outside it is refused with ``UnsafePath``."""
        target = self.resolve_vault_path(path)
        if not target.is_file():
            raise UnsafePath(f"{path} is not a file in the vault; use a path from search results")
        # Private spans are blanked (line breaks kept) so no line range can reveal them.
        all_lines = strip_private(target.read_text(encoding="utf-8", errors="replace")).splitlines()
        start, end = lines or (1, max(len(all_lines), 1))
        if start < 1 or end < start:
            raise ConfigError(
                f"line range {start}:{end} is invalid; use START:END with 1 <= START <= END"
            )
        return Excerpt(
            path=str(path),
            start_line=start,
            end_line=min(end, len(all_lines)),
            total_lines=len(all_lines),
            text="\n".join(all_lines[start - 1 : end]),
        )

    def resolve_vault_path(self, path: str | Path) -> Path:
        raw = str(path)
        if "\x00" in raw:
            raise UnsafePath("path contains a NUL byte; refused")
        candidate = Path(raw).expanduser()
        if not candidate.is_absolute():
            candidate = self.config.root / candidate
        resolved = candidate.resolve()
        roots = self.vault_roots()
        if not any(resolved == r or resolved.is_relative_to(r) for r in roots):
            allowed = ", ".join(str(r) for r in roots)
            raise UnsafePath(
                f"{path} is outside the vault ({allowed}); only vault files can be read"
            )
        return resolved

    def stats(self) -> dict[str, Any]:
        docs = self.store.list_documents()
        identity = self.store.get_identity()
        by_source: dict[str, int] = {}
        for doc in docs.values():
            source = str(doc.metadata.get("source", "unknown"))
            by_source[source] = by_source.get(source, 0) + 1
        return {
            "store": self.config.store.backend,
            "embedder": self.config.embedder.provider,
            "documents": len(docs),
            "documents_by_source": by_source,
            "chunks": self.store.count(),
            "identity": identity.model_dump() if identity else None,
            "cache": asdict(self.embedder.cache.stats()) if self.embedder.cache else None,
            "root": str(self.config.root),
        }


def build_part(config: EngramConfig, registry: Registry, kind: str) -> Any:
    """Pick a plugin by name from the config, validate its options, build it."""
    if kind == "store":
        name, raw, section = config.store.backend, config.store.options(), "store"
        options = plugin_options(config, registry, "store", name, raw, section)
        return registry.get("store", name).build(options)
    if kind == "embedder":
        name, raw = config.embedder.provider, config.embedder.options()
        options = plugin_options(config, registry, "embedder", name, raw, "embedder")
        return registry.get("embedder", name).build(options)
    if kind == "searcher":
        entry = registry.get("searcher", config.search.searcher)
        return entry.build(config.search)
    raise ConfigError(f"unknown part kind {kind!r}")
