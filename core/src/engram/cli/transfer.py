"""``engram export`` and ``engram import``: memories with their history, as JSON lines."""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from engram.cli.common import console, err_console, open_memory, read_stdin
from engram.errors import ConfigError

if TYPE_CHECKING:
    from engram.memories.lifecycle.transfer import ExportRecord
    from engram.memory import Memory


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
    app.command("import")(import_command)


def export_command(
    ctx: typer.Context,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file (default: stdout).")
    ] = None,
    origin: Annotated[
        str | None,
        typer.Option(
            "--origin",
            help="On a shared store: export the memories another machine (an origin name or "
            "id, see `engram stats`) indexed there, from the texts the server keeps.",
        ),
    ] = None,
) -> None:
    """Write every memory (revisions, supersede chains, scopes, importance, access counts) as
    JSON lines, one memory a line: a backup, or a move to another machine."""
    from engram.memories.lifecycle.transfer import export_memories

    with open_memory(ctx) as memory:
        if origin is None:
            lines = [r.model_dump_json() + "\n" for r in export_memories(memory.writer)]
        else:
            lines = [r.model_dump_json() + "\n" for r in _stored_memories(memory, origin)]
    if out is None:
        sys.stdout.write("".join(lines))
        return
    _write_whole(out, "".join(lines))
    err_console.print(f"exported {len(lines)} memories → {out}", markup=False, highlight=False)


def _stored_memories(memory: Memory, origin: str) -> list[ExportRecord]:
    """One origin's memories as the shared store keeps them (``export --origin``)."""
    from engram.memories.lifecycle.transfer import export_stored
    from engram.stores.origins import OriginStore, split_stored

    store = memory.store
    if not isinstance(store, OriginStore):
        raise ConfigError(
            f"--origin reads a store that many machines share; the {memory.config.store.backend} "
            "store configured here belongs to this vault alone (plain `engram export` has it all)"
        )
    wanted = store.resolve_origin(origin)
    records = []
    for stored_id, record in store.all_documents().items():
        parts = split_stored(stored_id)
        if parts is not None and parts[0] == wanted:
            records.append(record.model_copy(update={"id": parts[1]}))
    return list(export_stored(records, memory.config.memory.dir.as_posix()))


def import_command(
    ctx: typer.Context,
    source: Annotated[str, typer.Argument(help="A file written by `engram export`; - is stdin.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Bring memories from `engram export` back: new ones are written, the same ones left alone,
    a differing one keeps the newer wording and every other wording as a revision."""
    from engram.memories.lifecycle.transfer import import_memories, read_records

    if source == "-":
        raw, name = read_stdin(), "stdin"
    else:
        path = Path(source)
        if not path.is_file():
            raise ConfigError(f"{source} is not a file; give a file written by `engram export`")
        try:
            raw, name = path.read_text(encoding="utf-8", errors="replace"), source
        except OSError as exc:
            raise ConfigError(f"cannot read {source}: {exc.strerror or exc}") from None
    records = list(read_records(raw.splitlines(), name))
    with open_memory(ctx) as memory:
        report = import_memories(memory.writer, records)
    if as_json:
        console.print_json(report.model_dump_json())
        return
    for warning in report.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    console.print(report.summary(), markup=False, highlight=False)


def _write_whole(out: Path, text: str) -> None:
    """``text`` into ``out`` whole or not at all (a ``.part`` file renamed over it); a path
    that cannot be written is one line (``ConfigError``) and leaves no ``.part`` behind."""
    where = str(out) if len(str(out)) <= 200 else f"{str(out)[:200]}…"
    try:
        if out.is_dir():
            raise ConfigError(f"{where} is a folder; give a file name, e.g. {where}/x.jsonl")
    except OSError as exc:
        raise ConfigError(f"cannot write {where}: {exc.strerror or exc}") from None
    tmp = out.with_name(out.name + ".part")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise ConfigError(f"cannot write {where}: {exc.strerror or exc}") from None
