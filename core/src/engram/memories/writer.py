"""What the feature modules need of an open memory, and nothing more.

Remembering, forgetting, aging, pruning, capture, recall and session indexing all write into
(or read from) the same few parts: the store, the embedder, the memory folders with the chunker
that marks their files, the identity check before a write, the access log, and the extractor,
built on first use. ``Writer`` holds just those. The façade (``engram.memory.Memory``) builds
one and composes the features on top of it, so no feature module imports the façade.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from engram.chunking import make_chunker
from engram.config import EngramConfig
from engram.errors import ConfigError
from engram.memories.access import AccessCounter
from engram.memories.chunks import MakeChunks, scoped_chunks
from engram.memories.scopes import MemoryFolder, memory_folders
from engram.models import IndexIdentity
from engram.protocols import Embedder, Extractor, Store, embedder_identity
from engram.stores import damage as damage_mark
from engram.stores.checks import check_identity

log = logging.getLogger(__name__)


class Writer:
    """The store, the embedder and the memory folders of one open memory, with the checks
    every write makes."""

    def __init__(
        self,
        config: EngramConfig,
        store: Store,
        embedder: Embedder,
        build_extractor: Callable[[], Extractor],
    ) -> None:
        self.config = config
        self.store = store
        self.embedder = embedder
        self.chunker = make_chunker(config.chunking)
        self.folders: list[MemoryFolder] = memory_folders(config)
        # Ids that newer memories supersede in folders engram cannot mark (``chains.repair``).
        self.retired_ids: set[str] = set()
        self.make_chunks: MakeChunks = scoped_chunks(
            self.chunker, self.folders, config.root, lambda: self.retired_ids
        )
        self.access = AccessCounter(self.folders, config.root)
        self._build_extractor = build_extractor
        self._extractor: Extractor | None = None
        self._extractor_error: str | None = None

    @property
    def root(self) -> Path:
        """The project root: document ids of memory files are relative to it."""
        return self.config.root

    @property
    def memory_dir(self) -> Path:
        """The project's memory folder (``[memory] dir``), resolved: where memories go."""
        return self.folders[0].path

    # -- identity ------------------------------------------------------------------------------
    @property
    def identity(self) -> IndexIdentity:
        return embedder_identity(self.embedder, self.config.chunking.describe())

    def check_identity(self, *, writing: bool) -> None:
        """Refuse to mix vectors of two embedders (``stores.checks.check_identity``: a read only
        needs the same vectors, a write the same chunker too); record the identity on a store's
        first write. A write to a store just called damaged is refused (``damage_mark``)."""
        if writing:
            damage_mark.refuse_writes(self.config)
        wanted = self.identity
        unset = check_identity(self.store.get_identity(), wanted, vectors_only=not writing)
        if unset and writing:
            self.store.set_identity(wanted)

    # -- the extractor -------------------------------------------------------------------------
    @property
    def extractor(self) -> Extractor | None:
        """The configured extractor, built on first use; None (with ``extractor_error`` saying
        why) when it cannot be built, so a memory write never fails for want of one."""
        if self._extractor is None and self._extractor_error is None:
            try:
                self._extractor = self._build_extractor()
            except Exception as exc:
                self._extractor_error = f"{type(exc).__name__}: {exc}"
                log.warning("extractor %s unavailable: %s", self.config.extractor.provider, exc)
        return self._extractor

    @property
    def built_extractor(self) -> Extractor | None:
        """The extractor if it was built (to close it), without building it."""
        return self._extractor

    def require_extractor(self) -> Extractor:
        """The extractor, or the error that says why it cannot be built (for capture)."""
        extractor = self.extractor
        if extractor is None:
            raise ConfigError(
                f"the extractor {self.config.extractor.provider!r} cannot be used "
                f"({self._extractor_error}); fix [extractor] in engram.toml, or use "
                'provider = "rules" (offline)'
            )
        return extractor
