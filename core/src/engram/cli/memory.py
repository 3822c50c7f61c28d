"""``engram remember``, ``forget``, ``list`` and ``recall``: agent memories from the shell."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from engram.cli.common import console, err_console, open_memory, read_stdin
from engram.memories.judge.conflicts import conflict_note
from engram.memories.scopes import FolderScope, Scope
from engram.models import MemoryType, OnCollision


def register(app: typer.Typer) -> None:
    app.command("remember")(remember_command)
    app.command("forget")(forget_command)
    app.command("restore")(restore_command)
    app.command("list")(list_command)
    app.command("recall")(recall_command)


def remember_command(
    ctx: typer.Context,
    content: Annotated[str, typer.Argument(help="The memory (markdown); - reads stdin.")],
    title: Annotated[str | None, typer.Option(help="A short title (default: first line).")] = None,
    type_: Annotated[MemoryType, typer.Option("--type", help="Kind of memory.")] = "note",
    scope: Annotated[
        Scope, typer.Option(help="project (this project's folder) or user (every project).")
    ] = "project",
    tag: Annotated[list[str] | None, typer.Option("--tag", help="A tag (repeatable).")] = None,
    importance: Annotated[
        float, typer.Option(min=0.0, max=10.0, help="0 to 10; prune removes low values first.")
    ] = 1.0,
    subject: Annotated[
        str | None, typer.Option(help="Who or what it is about (default: read from the text).")
    ] = None,
    on_collision: Annotated[
        OnCollision | None,
        typer.Option(
            help="A memory with this title's file name exists: new (keep both), update (a new "
            "revision of it, its old text kept) or fail. Default: [memory] on_collision (new)."
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the memory as JSON.")] = False,
) -> None:
    """Save a memory as a markdown file and index it. The same fact already stored is updated
    instead (its earlier wording kept as a revision); memories it reverses are superseded, and
    ones it may contradict are linked."""
    text = read_stdin() if content == "-" else content
    with open_memory(ctx) as memory:
        stored = memory.remember(
            text,
            title=title,
            type=type_,
            scope=scope,
            tags=tag or [],
            importance=importance,
            subject=subject,
            on_collision=on_collision,
        )
    if as_json:
        console.print_json(stored.model_dump_json())
        return
    for warning in stored.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    verb = "remembered" if stored.action == "created" else "updated"
    line = f"{verb} {stored.id} → {stored.path}"
    if stored.action == "updated":
        line += " (the same fact, already stored; an earlier wording is kept: `engram history`)"
    for label, ids in (
        ("supersedes", stored.superseded),
        ("conflicts with", stored.linked_conflicts),
        ("related to", stored.linked_related),
    ):
        if ids:
            line += f" ({label} {', '.join(ids)})"
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def forget_command(
    ctx: typer.Context,
    id_or_path: Annotated[str, typer.Argument(help="A memory id, or its path.")],
    as_json: Annotated[
        bool, typer.Option("--json", help='Print {"forgotten": [paths]} as JSON.')
    ] = False,
) -> None:
    """Delete a memory: its file and every chunk indexed from it."""
    with open_memory(ctx) as memory:
        removed = memory.forget(id_or_path)
    if as_json:
        console.print_json(json.dumps({"forgotten": [str(p) for p in removed]}))
        return
    for path in removed:
        console.print(f"forgot {path}", markup=False, highlight=False, soft_wrap=True)


def restore_command(
    ctx: typer.Context,
    id_or_path: Annotated[str, typer.Argument(help="A memory id, or its path.")],
    revision: Annotated[
        int | None,
        typer.Option(min=1, help="The revision to bring back (`engram history ID` numbers them)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the memory as JSON.")] = False,
) -> None:
    """Bring an earlier version back: a revision's wording, or a superseded memory made live
    again (linked as conflicting with what superseded it). Nothing is lost: the wording it
    replaces is kept as a revision."""
    with open_memory(ctx) as memory:
        stored = memory.restore(id_or_path, revision)
    if as_json:
        console.print_json(stored.model_dump_json())
        return
    for warning in stored.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    line = f"restored {stored.id} → {stored.path}"
    if stored.conflicts_with:
        line += f" (conflicts with {', '.join(stored.conflicts_with)})"
    console.print(line, markup=False, highlight=False, soft_wrap=True)


def list_command(
    ctx: typer.Context,
    type_: Annotated[MemoryType | None, typer.Option("--type", help="Only this type.")] = None,
    scope: Annotated[
        FolderScope | None, typer.Option(help="Only this scope: project, user or external.")
    ] = None,
    tag: Annotated[str | None, typer.Option(help="Only memories with this tag.")] = None,
    subject: Annotated[
        str | None,
        typer.Option(help="Only memories about this subject (a name, 'user', 'project')."),
    ] = None,
    since: Annotated[str | None, typer.Option(help="Created on or after (ISO date).")] = None,
    until: Annotated[str | None, typer.Option(help="Created on or before (ISO date).")] = None,
    limit: Annotated[int | None, typer.Option("--limit", "-n", min=1)] = None,
    include_superseded: Annotated[
        bool, typer.Option("--include-superseded", help="Also list superseded and archived ones.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
) -> None:
    """List memories of every folder (project, user, external), newest first."""
    with open_memory(ctx) as memory:
        found = memory.list_memories(
            type=type_,
            scope=scope,
            tag=tag,
            subject=subject,
            since=since,
            until=until,
            limit=limit,
            include_superseded=include_superseded,
        )
    if as_json:
        console.print_json(json.dumps([m.model_dump(mode="json") for m in found]))
        return
    if not found:
        err_console.print("no memories match")
        return
    created = {m.id: m.created_at for m in found if m.id and m.created_at}
    for m in found:
        kind = "/".join(x for x in (m.type, m.scope) if x) or "-"
        state = "" if m.live else f" [{m.status}]"
        if m.live:
            state += conflict_note(
                m.model_dump(include={"id", "created_at", "conflicts_with"}), created
            )
        console.print(
            f"{m.created_at or '?':25} {m.id or '-':22} {kind:22} {m.title}{state}  ({m.path})",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


def recall_command(
    ctx: typer.Context,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="What the session is about.")
    ] = None,
    budget: Annotated[
        int | None, typer.Option(min=0, help="Token budget (default: [recall] budget).")
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            help="Only memory (notes and memories), vault (the notes) or sessions (default: all)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print items and counts as JSON.")
    ] = False,
) -> None:
    """Print the memory block for the start of an agent session, within a token budget."""
    with open_memory(ctx) as memory:
        result = memory.recall(query, budget=budget, source=source)
    if as_json:
        console.print_json(result.model_dump_json())
        return
    for warning in result.warnings:
        err_console.print(f"warning: {warning}", markup=False, highlight=False, soft_wrap=True)
    if result.text:
        typer.echo(result.text)
    err_console.print(
        f"{len(result.items)} memories, {result.tokens}/{result.budget} tokens", highlight=False
    )
