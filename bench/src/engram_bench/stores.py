"""Every installed store, built fresh in a folder of its own so runs never touch a user's index.

Options come from three layers: the store's own defaults, ``DEFAULT_OPTIONS`` below (known stores'
benchmark settings), and the user's ``--store-option NAME.KEY=VALUE``. A store whose options model
has a ``path`` field gets ``<folder>/data`` (a file or a folder, as the store likes; the whole
folder is what the disk footprint counts). A store whose options have a ``namespace`` (a server
store: PostgreSQL) gets a namespace of its own per folder, kept in the folder so that the same
folder opened again (reopen, a cold-open process) finds the same rows and a folder emptied for a
new measurement starts an empty namespace. A store that cannot be built from that (one that
needs a server address, say) is skipped with a note that says which option to pass.
"""

from __future__ import annotations

import shutil
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from engram.config import DEFAULT_STORE
from engram.errors import ConfigError
from engram.protocols import Store
from engram.registry import Entry, Registry

# Benchmark settings for stores we know; anything not listed runs with its defaults.
DEFAULT_OPTIONS: dict[str, dict[str, Any]] = {
    "chroma": {"mode": "embedded"},
}
PATH_FIELD = "path"
NAMESPACE_FIELD = "namespace"
NAMESPACE_FILE = ".bench-namespace"


@dataclass
class StoreSpec:
    """A store to benchmark: its registry entry and the options it is built with."""

    name: str
    entry: Entry
    raw_options: dict[str, Any]

    @property
    def version(self) -> str:
        return f"{self.entry.distribution or self.entry.plugin} {self.entry.version or ''}".strip()

    def options_for(self, folder: Path) -> dict[str, Any]:
        """The raw options of a store whose data lives under ``folder``; a server store with
        namespaces (PostgreSQL) gets a fresh one, so a run never meets another's index."""
        raw = dict(self.raw_options)
        fields = self.entry.options.model_fields
        if PATH_FIELD in fields and PATH_FIELD not in raw:
            raw[PATH_FIELD] = folder / "data"
        if NAMESPACE_FIELD in fields and NAMESPACE_FIELD not in raw:
            raw[NAMESPACE_FIELD] = folder_namespace(folder)
        return raw

    def build(self, folder: Path) -> Store:
        """A new store instance whose data lives under ``folder``."""
        folder.mkdir(parents=True, exist_ok=True)
        options = _validate(self.name, self.entry.options, self.options_for(folder))
        store: Store = self.entry.build(options)
        return store


def select_stores(
    registry: Registry, wanted: list[str] | None, overrides: dict[str, dict[str, Any]]
) -> tuple[list[StoreSpec], dict[str, str]]:
    """The stores to run (every installed one when ``wanted`` is None) and notes on skipped ones."""
    installed = registry.names("store")
    # The default store first: it is the one users get, and the pipeline's cold run uses it.
    names = sorted(installed, key=lambda n: (n != DEFAULT_STORE, n)) if wanted is None else wanted
    specs: list[StoreSpec] = []
    skipped: dict[str, str] = {}
    for name in names:
        entry = registry.get("store", name)  # an unknown name lists what is installed
        raw = {**DEFAULT_OPTIONS.get(name, {}), **overrides.get(name, {})}
        probe = dict(raw)
        if PATH_FIELD in entry.options.model_fields:
            probe.setdefault(PATH_FIELD, Path("probe"))
        try:
            _validate(name, entry.options, probe)
        except ConfigError as exc:
            skipped[name] = str(exc)
            continue
        specs.append(StoreSpec(name, entry, raw))
    unknown = set(overrides) - set(names)
    if unknown:
        raise ConfigError(
            f"--store-option names stores that are not benchmarked: {', '.join(sorted(unknown))}; "
            f"installed stores: {', '.join(installed)}"
        )
    return specs, skipped


def maintain(store: Store) -> float | None:
    """Run the store's ``optimize()`` after a bulk ingest, as ``engram optimize`` after a large
    import (LanceDB folds new rows into its keyword and ANN indexes there); seconds it took, or
    None for a store that needs no maintenance."""
    run = getattr(store, "optimize", None)
    if not callable(run):
        return None
    began = time.perf_counter()
    run()
    return time.perf_counter() - began


def folder_namespace(folder: Path) -> str:
    """The namespace of the store whose data lives under ``folder``: made up (the folder's name
    and a random part, so two runs on one server never share one) and written the first time,
    read back after."""
    marker = folder / NAMESPACE_FILE
    if marker.exists():
        return marker.read_text(encoding="utf-8").strip()
    folder.mkdir(parents=True, exist_ok=True)
    name = f"bench-{folder.name}-{uuid.uuid4().hex[:12]}"
    marker.write_text(name, encoding="utf-8")
    return name


def release(spec: StoreSpec, folder: Path) -> None:
    """Empty the server namespace the bench made up for ``folder`` (a server outlives the run,
    and a user's server should keep no benchmark rows), then remove the folder. A namespace
    given with ``--store-option`` is the user's and is left as it is."""
    if (folder / NAMESPACE_FILE).exists():
        try:
            store = spec.build(folder)
            try:
                store.reset()
            finally:
                store.close()
        except Exception as exc:  # a cleanup must not hide the figures or the error before it
            warnings.warn(
                f"could not empty the benchmark's {spec.name} namespace: {exc}", stacklevel=2
            )
    if folder.exists():
        fresh_folder(folder).rmdir()


def fresh_folder(folder: Path) -> Path:
    """``folder``, emptied."""
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return folder


def _validate(name: str, model: type[BaseModel], raw: dict[str, Any]) -> BaseModel:
    try:
        return model.model_validate(raw)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}"
            for err in exc.errors()[:3]
        )
        raise ConfigError(
            f"store {name!r} cannot be built for the benchmark ({problems}); pass its options "
            f"with --store-option {name}.KEY=VALUE"
        ) from None
