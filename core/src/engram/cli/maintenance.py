"""``engram migrate``, ``engram optimize`` and ``engram reset``: moving an index between stores,
store upkeep, and emptying the derived index (never the markdown).

``migrate`` builds both stores from the config: a side whose backend is the configured
``[store] backend`` starts from that section's options, any other side from the plugin's
defaults; ``--from-set`` / ``--to-set KEY=VALUE`` override either (e.g. ``--to-set
path=.engram/lance`` or ``--to-set storage_options.aws_region=eu-west-1``).
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from engram.cli.common import console, err_console, get_config
from engram.config import EngramConfig, parse_overrides, plugin_options
from engram.errors import ConfigError
from engram.plugins import build_registry, get_plugin_manager
from engram.protocols import Optimizes, Store, Summarises
from engram.registry import Registry
from engram.stores import damage as damage_mark
from engram.stores.migrate import migrate
from engram.stores.parts import build_part
from engram.stores.recovery import open_store, view_for


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_command)
    app.command("optimize")(optimize_command)
    app.command("reset")(reset_command)


def migrate_command(
    ctx: typer.Context,
    to: Annotated[str, typer.Option("--to", help="Store to copy into (e.g. lancedb).")],
    from_: Annotated[
        str | None,
        typer.Option("--from", help="Store to copy from (default: the configured store)."),
    ] = None,
    from_set: Annotated[
        list[str] | None,
        typer.Option("--from-set", help="Source store option KEY=VALUE (repeatable)."),
    ] = None,
    to_set: Annotated[
        list[str] | None,
        typer.Option("--to-set", help="Target store option KEY=VALUE (repeatable)."),
    ] = None,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Reset a target that is not empty, then copy.")
    ] = False,
    batch_size: Annotated[int, typer.Option(min=1, help="Chunks per write.")] = 500,
    verify_sample: Annotated[
        int, typer.Option(min=0, help="Chunks whose copy and searches are checked.")
    ] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Copy every chunk, vector and document record into another store, without re-embedding;
    the source is only read."""
    config = get_config(ctx)
    registry = build_registry(get_plugin_manager())
    source_name = from_ or config.store.backend
    source_options = _options(config, registry, source_name, from_set or [], "--from-set")
    target_options = _options(config, registry, to, to_set or [], "--to-set")
    if source_name == to and source_options == target_options:
        raise ConfigError(
            f"--from and --to are the same {to} store; point the target elsewhere, e.g. "
            f"--to-set path=.engram/{to}-copy"
        )
    # A shared store is read and written as this vault's origin (engram.stores.origins).
    source: Store = view_for(config, registry.get("store", source_name).build(source_options))
    try:
        target: Store = view_for(config, registry.get("store", to).build(target_options))
        try:
            report = migrate(
                source,
                target,
                batch_size=batch_size,
                verify_sample=verify_sample,
                overwrite=overwrite,
            )
        finally:
            target.close()
    finally:
        source.close()
    if as_json:
        console.print_json(report.model_dump_json())
    else:
        console.print(f"{source_name} → {to}: {report.summary()}", highlight=False)
    if to != config.store.backend:
        err_console.print(
            f'to use it, set [store] backend = "{to}" in engram.toml (with the options you '
            f"passed to --to-set)",
            highlight=False,
        )


def _options(
    config: EngramConfig, registry: Registry, backend: str, pairs: list[str], flag: str
) -> BaseModel:
    for pair in pairs:
        key, sep, _ = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"{flag} expects KEY=VALUE (e.g. path=.engram/lance), got {pair!r}")
    raw = config.store.options() if backend == config.store.backend else {}
    merged = _merge(raw, parse_overrides(pairs))
    return plugin_options(config, registry, "store", backend, merged, f"{flag} ({backend})")


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        old = out.get(key)
        out[key] = (
            _merge(old, value) if isinstance(old, dict) and isinstance(value, dict) else value
        )
    return out


def optimize_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Compact the configured store, clean up old versions and update its indexes."""
    config = get_config(ctx)
    backend = config.store.backend
    built: Store = build_part(config, build_registry(get_plugin_manager()), "store")
    store = view_for(config, built)
    try:
        if not isinstance(store, Optimizes):
            reason = f"the {backend} store has nothing to optimize: it needs no maintenance"
            if as_json:
                console.print_json(
                    json.dumps({"store": backend, "optimized": False, "why": reason})
                )
            else:
                console.print(reason, highlight=False)
            return
        result = store.optimize()
    finally:
        store.close()
    if as_json:
        data = result.model_dump(mode="json") if isinstance(result, BaseModel) else result
        payload = {"store": backend, "optimized": True, "report": data}
        console.print_json(json.dumps(payload, default=str))
        return
    if isinstance(result, Summarises):
        console.print(result.summary(), highlight=False)
    else:
        console.print(f"optimized the {backend} store", highlight=False)


def reset_command(
    ctx: typer.Context,
    yes: Annotated[
        bool, typer.Option("--yes", help="Really empty the index (nothing else is touched).")
    ] = False,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print what was emptied (and a damaged file kept) as JSON."),
    ] = False,
) -> None:
    """Empty the derived index (chunks, vectors, document records); the markdown files, the
    memories and the embedding cache are left alone, and `engram index` fills it again."""
    config = get_config(ctx)
    backend = config.store.backend
    if not yes:
        raise ConfigError(
            f"engram reset empties the {backend} index (the markdown files stay); run "
            "`engram reset --yes` to do it"
        )
    store, damaged = open_store(config, build_registry(get_plugin_manager()), clear_remote=True)
    try:
        damage_mark.clear(config)
        store.reset()
    finally:
        store.close()
    if damaged is not None and damaged.files:
        err_console.print(
            f"warning: the index was damaged ({damaged.detail}); kept as {damaged.files[0]}",
            markup=False,
            highlight=False,
        )
    if as_json:
        kept = str(damaged.files[0]) if damaged is not None and damaged.files else None
        console.print_json(json.dumps({"backend": backend, "reset": True, "damaged_kept": kept}))
        return
    console.print(
        f"the {backend} index is empty; the markdown files are untouched. Run `engram index` "
        "to fill it again.",
        highlight=False,
    )
