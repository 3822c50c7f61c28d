"""``engram usage``: what the API embedders and extractors sent and what it cost, from the usage
ledger."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated

import typer
from rich import box
from rich.console import Console
from rich.table import Table

from engram.cli.common import console, get_config
from engram.errors import ConfigError
from engram.usage import GROUPS, GroupBy, UsageLedger, UsageRow, ledger_path

_AGE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([mhdw])\s*$")
_SECONDS = {"m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def register(app: typer.Typer) -> None:
    app.command("usage")(usage_command)


def usage_command(
    ctx: typer.Context,
    as_json: Annotated[bool, typer.Option("--json", help="Print as JSON.")] = False,
    since: Annotated[
        str | None,
        typer.Option(help="Only requests since a UTC date (2025-01-31) or an age (7d, 24h, 30m)."),
    ] = None,
    by: Annotated[
        str,
        typer.Option(help="Group by any of day, provider, model, operation (comma-separated)."),
    ] = "day,provider,model,operation",
    ledger: Annotated[
        Path | None,
        typer.Option(
            help="Ledger file (default: the embedder's ledger_path, else .engram/usage.sqlite)."
        ),
    ] = None,
) -> None:
    """API requests, tokens and estimated cost of embedders and extractors, by day, provider,
    model and operation (embed, extract, contradict, condense)."""
    config = get_config(ctx)
    path = ledger.expanduser().resolve() if ledger else ledger_path(config)
    cutoff = parse_since(since)
    groups = parse_groups(by)
    with UsageLedger(path) as book:
        rows = book.summary(groups, since=cutoff)
        total = book.summary((), since=cutoff)[0]
    if as_json:
        console.print_json(
            json.dumps(
                {
                    "ledger": str(path),
                    "since": cutoff,
                    "rows": [r.model_dump(exclude_none=False) for r in rows],
                    "total": total.model_dump(exclude={"day", "provider", "model", "operation"}),
                }
            )
        )
        return
    if total.requests == 0:
        console.print(f"no API usage recorded (ledger: {path})", highlight=False)
        return
    # Piped output has no width to fit: keep rows whole rather than cut them to 80 columns.
    out = console if console.is_terminal else Console(width=160)
    out.print(_table(rows, total, groups))
    out.print(f"day = UTC date; cost estimated from list prices; ledger: {path}", highlight=False)


def parse_since(value: str | None) -> float | None:
    """A Unix time from ``2025-01-31``, ``2025-01-31T12:00`` (UTC unless it says otherwise) or
    an age such as ``7d``, ``24h``, ``30m``, ``2w``."""
    if value is None:
        return None
    match = _AGE.match(value)
    if match:
        return time.time() - float(match.group(1)) * _SECONDS[match.group(2)]
    try:
        when = datetime.fromisoformat(value.strip())
    except ValueError:
        raise ConfigError(
            f"--since {value!r} is neither a date nor an age; use e.g. 2025-01-31 or 7d"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return when.timestamp()


def parse_groups(value: str) -> list[GroupBy]:
    groups: list[GroupBy] = []
    for part in (p.strip() for p in value.split(",")):
        if not part:
            continue
        match = next((g for g in GROUPS if g == part), None)
        if match is None:
            raise ConfigError(
                f"--by {part!r} is not a grouping; use any of {', '.join(GROUPS)} (comma-separated)"
            )
        groups.append(match)
    return groups


def _table(rows: list[UsageRow], total: UsageRow, groups: list[GroupBy]) -> Table:
    table = Table(box=box.SIMPLE_HEAD, show_footer=True, pad_edge=False)
    for i, group in enumerate(groups):
        table.add_column(group, footer="total" if i == 0 else "", no_wrap=True)
    numbers = [
        ("requests", str(total.requests)),
        ("errors", str(total.errors)),
        ("tokens in", f"{total.input_tokens:,}"),
        ("tokens out", f"{total.output_tokens:,}"),
        ("cost USD", _cost(total)),
        ("latency", _latency(total)),
    ]
    for name, footer in numbers:
        table.add_column(name, justify="right", footer=footer, no_wrap=True)
    for row in rows:
        table.add_row(
            *[str(getattr(row, g)) for g in groups],
            str(row.requests),
            str(row.errors),
            f"{row.input_tokens:,}",
            f"{row.output_tokens:,}",
            _cost(row),
            _latency(row),
        )
    return table


def _cost(row: UsageRow) -> str:
    """Estimated cost in USD; ``?`` marks requests to models without a known price."""
    if row.cost_usd is None:
        return "?" if row.unpriced_requests else "0"
    text = f"{row.cost_usd:.6f}".rstrip("0").rstrip(".")
    return text + ("+?" if row.unpriced_requests else "")


def _latency(row: UsageRow) -> str:
    return "-" if row.avg_latency_ms is None else f"{row.avg_latency_ms:.0f} ms"
