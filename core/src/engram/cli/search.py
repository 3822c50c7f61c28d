"""``engram search`` and ``engram get``: reading the memory back."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from engram.cli.common import console, open_memory, print_labelled
from engram.errors import ConfigError
from engram.filters import Filter, parse_filter
from engram.memories.judge.conflicts import conflict_note, created_at_of
from engram.models import MemoryType, SearchMode, SearchResult
from engram.text.snippets import snippet

SNIPPET_CHARS = 160


def register(app: typer.Typer) -> None:
    app.command("search")(search_command)
    app.command("get")(get_command)


def search_command(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help="What to look for, in plain words.")],
    mode: Annotated[SearchMode | None, typer.Option(help="hybrid, vector or keyword.")] = None,
    limit: Annotated[
        int | None, typer.Option("--limit", "-n", min=1, help="How many hits.")
    ] = None,
    filter_json: Annotated[
        str | None,
        typer.Option(
            "--filter",
            # Short tokens: click wraps help text and breaks a word longer than its column.
            help='Metadata filter as JSON: \'{"type":"decision"}\' (each field equals its '
            "value; a list means any of them); other operators (ne, range, and, or, not): "
            "docs/configuration.md, Filters.",
        ),
    ] = None,
    include_superseded: Annotated[
        bool,
        typer.Option(
            "--include-superseded", help="Also show superseded and archived memories (history)."
        ),
    ] = False,
    recency: Annotated[
        float | None,
        typer.Option(
            min=0.0,
            max=1.0,
            help="Weight of recency, 0 to 1: score*(1-w) + w*exp(-decay*age_days) "
            "(default: [search] recency_weight).",
        ),
    ] = None,
    per_document: Annotated[
        bool | None,
        typer.Option(
            "--per-document/--per-chunk",
            help="One hit per file (its best chunk), so --limit counts files "
            "(default: [search] per_document, off).",
        ),
    ] = None,
    memory_type: Annotated[
        MemoryType | None,
        typer.Option(
            "--type",
            help="Only memories of this type (preference, decision, project-brief…). A query "
            "naming one type ('what are my preferences') gets its memories first anyway.",
        ),
    ] = None,
    subject: Annotated[
        str | None,
        typer.Option(
            help="Only memories about this subject: a name, 'user', 'project' (any case).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print hits as JSON.")] = False,
) -> None:
    """Search the memory (hybrid keyword + vector by default). Superseded memories are left out
    unless --include-superseded."""
    flt: Filter | None = None
    if filter_json:
        try:
            flt = parse_filter(json.loads(filter_json))
        except json.JSONDecodeError as exc:
            raise ConfigError(
                f"--filter is not valid JSON ({exc.msg}); quote it in single quotes"
            ) from None
    with open_memory(ctx) as memory:
        result = memory.search(
            query,
            mode=mode,
            limit=limit,
            filter=flt,
            include_superseded=include_superseded,
            recency_weight=recency,
            per_document=per_document,
            type=memory_type,
            subject=subject,
        )
    if as_json:
        console.print_json(json.dumps(_as_json(result)))
        return
    for warning in result.warnings:
        print_labelled("warning:", warning)
    if not result.hits:
        console.print(f"no results for {query!r} ({result.mode})", highlight=False)
        return
    table = Table(
        title=f"{len(result.hits)} results for {query!r} ({result.mode})", title_justify="left"
    )
    table.add_column("#", justify="right")
    scores = shown_scores(result)
    table.add_column("score" if result.mode != "keyword" else "score (vs best)", justify="right")
    table.add_column("where", overflow="fold")
    table.add_column("snippet", overflow="fold")
    created = created_at_of(h.chunk.metadata for h in result.hits)
    for rank, (hit, score) in enumerate(zip(result.hits, scores, strict=True), 1):
        meta = hit.chunk.metadata
        table.add_row(
            str(rank),
            score,
            f"{hit.chunk.document_id}:{meta.get('start_line', '?')}-{meta.get('end_line', '?')}"
            + conflict_note(meta, created),
            snippet(hit.chunk.text, query, SNIPPET_CHARS),
        )
    console.print(table)


def shown_scores(result: SearchResult) -> list[str]:
    """The score column. Keyword-only results (``--mode keyword``, or hybrid degraded when the
    embedder is down) carry raw BM25 magnitudes, which on a small corpus are around 1e-6 and
    all print as 0.000, reading as "no match": they are shown relative to the best hit (1.000),
    which says how the hits compare. ``--json`` keeps the raw scores."""
    if result.mode == "keyword" and result.hits:
        best = max(h.score for h in result.hits)
        if best > 0:
            return [_relative(h.score / best) for h in result.hits]
        return [f"{h.score:.3g}" for h in result.hits]
    return [f"{h.score:.3f}" for h in result.hits]


def _relative(share: float) -> str:
    """A share of the best score; a match far weaker than the best still reads as one."""
    return f"{share:.3f}" if share >= 0.0005 else ("<0.001" if share > 0 else "0")


def get_command(
    ctx: typer.Context,
    path: Annotated[str, typer.Argument(help="A vault file, as search results show it.")],
    lines: Annotated[
        str | None, typer.Option(help="Line range START:END (1-based, inclusive).")
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the excerpt (path, lines, text) as JSON.")
    ] = False,
) -> None:
    """Print a vault file, or some of its lines."""
    span = _parse_lines(lines) if lines else None
    with open_memory(ctx) as memory:
        excerpt = memory.get(path, span)
    if as_json:
        console.print_json(excerpt.model_dump_json())
        return
    console.print(excerpt.text, markup=False, highlight=False, soft_wrap=True)


def _parse_lines(raw: str) -> tuple[int, int]:
    start, sep, end = raw.partition(":")
    try:
        a = int(start)
        b = int(end) if sep and end else a
    except ValueError:
        raise ConfigError(f"--lines expects START:END such as 10:20, got {raw!r}") from None
    if a < 1 or b < a:
        raise ConfigError(f"--lines {raw}: need 1 <= START <= END")
    return a, b


def _as_json(result: SearchResult) -> dict[str, object]:
    return {
        "query": result.query,
        "mode": result.mode,
        "degraded": result.degraded,
        "warnings": result.warnings,
        "hits": [
            {
                "id": h.chunk.id,
                "path": h.chunk.document_id,
                "start_line": h.chunk.metadata.get("start_line"),
                "end_line": h.chunk.metadata.get("end_line"),
                "score": h.score,
                "vector_score": h.vector_score,
                "keyword_score": h.keyword_score,
                "text": h.chunk.text,
                "metadata": h.chunk.metadata,
            }
            for h in result.hits
        ],
    }
